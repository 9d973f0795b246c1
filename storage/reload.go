package storage

import "errors"

// ReloadState reloads from the store what Open keeps in memory of it (the
// GC thresholds and the schema times). A replicated engine whose store was
// written by its replica rather than by its own commits calls it before it
// serves SQL (cluster/shardrepl: a node taking over), without closing the
// Pebble its replica keeps applying into.
func (e *Engine) ReloadState() error {
	g := newGCState()
	s := &schemaTimes{}
	if err := errors.Join(g.load(e.db), s.load(e.db)); err != nil {
		return err
	}
	e.gcs.mu.Lock()
	e.gcs.entries = g.entries
	e.gcs.maxWall.Store(g.maxWall.Load())
	e.gcs.mu.Unlock()
	e.schema.mu.Lock()
	e.schema.byTable = s.byTable
	e.schema.maxWall.Store(s.maxWall.Load())
	e.schema.mu.Unlock()
	return nil
}
