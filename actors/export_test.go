package actors

// QuoteWaiters returns how many callers wait on the execution of a quote in
// flight (0 when none is, or the quote has no actor).
func (s *System) QuoteWaiters(orgID, quoteID string) int {
	ch := make(chan int, 1)
	s.actors.Root.Send(s.quotes, &quoteVisit{key: quoteKey{orgID, quoteID}, fn: func(a *quoteActor) {
		if a == nil {
			ch <- 0
			return
		}
		ch <- len(a.waiters) + len(a.later)
	}})
	return <-ch
}
