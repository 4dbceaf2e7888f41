package ledger

import "testing"

func TestAppendList(t *testing.T) {
	var l appendList[int]
	var views []appendList[int]
	const n = 3*chunkLen + 17
	for i := 0; i < n; i++ {
		if i%1000 == 0 {
			views = append(views, l.view())
		}
		l.append(i)
	}
	if l.len() != n {
		t.Fatalf("len %d, want %d", l.len(), n)
	}
	for i := 0; i < n; i++ {
		if l.at(i) != i {
			t.Fatalf("at(%d) = %d", i, l.at(i))
		}
	}
	// Views taken along the way still show exactly what was there.
	for k, v := range views {
		if v.len() != k*1000 {
			t.Fatalf("view %d has %d elements, want %d", k, v.len(), k*1000)
		}
		count := 0
		v.all(func(i, x int) {
			if x != i {
				t.Fatalf("view %d element %d = %d", k, i, x)
			}
			count++
		})
		if count != v.len() {
			t.Fatalf("view %d walked %d of %d", k, count, v.len())
		}
	}
}
