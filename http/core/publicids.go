package core

import "payments/ledger/publicids"

// publicIDs returns the deployment's maker of public entry and event ids
// (publicids.IDs): nil, the old unkeyed form, until the cluster's id key
// is committed (at its first start). Every id of an entry or event the API
// shows goes through it, and every one it reads back.
func (s *Server) PublicIDs() *publicids.IDs {
	if p := s.ids.Load(); p != nil {
		return p
	}
	key, ok := publicids.Key(s.Config.Actors.Reader())
	if !ok {
		return nil
	}
	p := publicids.New(key)
	s.ids.Store(p)
	return p
}
