package ledger

// chunkLen is the size of every chunk of an appendList after the first.
const chunkLen = 4096

// appendList is an append-only list kept in chunks: appending never copies
// more than one small first chunk, so a journal of millions of entries grows
// without stalls, and a copy of the list taken earlier (a snapshot's view)
// stays valid and unchanged while appends go on.
//
// The first chunk grows like a slice up to chunkLen, so the many short lists
// (an organization's handful of payouts) stay small; every later chunk is
// allocated at its full size and never reallocated.
type appendList[T any] struct {
	chunks [][]T
	n      int
}

func (l *appendList[T]) append(v T) {
	if l.n >= chunkLen && l.n%chunkLen == 0 {
		l.chunks = append(l.chunks, make([]T, 0, chunkLen))
	} else if len(l.chunks) == 0 {
		l.chunks = append(l.chunks, nil)
	}
	last := len(l.chunks) - 1
	l.chunks[last] = append(l.chunks[last], v)
	l.n++
}

func (l *appendList[T]) len() int { return l.n }

func (l *appendList[T]) at(i int) T { return l.chunks[i/chunkLen][i%chunkLen] }

// view returns a copy of the list as it is now. Later appends to l do not
// show in the copy, and must not be made to the copy.
func (l *appendList[T]) view() appendList[T] {
	chunks := make([][]T, len(l.chunks))
	copy(chunks, l.chunks)
	return appendList[T]{chunks: chunks, n: l.n}
}

// all calls fn for each element in order.
func (l *appendList[T]) all(fn func(int, T)) {
	i := 0
	for _, c := range l.chunks {
		for _, v := range c {
			fn(i, v)
			i++
		}
	}
}
