package core

import "payments/ledger"

// publicIDs returns the deployment's maker of public entry and event ids
// (ledger.PublicIDs): nil, the old unkeyed form, until the cluster's id key
// is committed (at its first start). Every id of an entry or event the API
// shows goes through it, and every one it reads back.
func (s *Server) PublicIDs() *ledger.PublicIDs {
	if p := s.ids.Load(); p != nil {
		return p
	}
	key, ok := s.Config.Actors.Reader().IDKey()
	if !ok {
		return nil
	}
	p := ledger.NewPublicIDs(key)
	s.ids.Store(p)
	return p
}
