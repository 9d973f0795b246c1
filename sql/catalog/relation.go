package catalog

// RelationExists reports whether name is taken by a table, a view, a
// sequence or an index of the database (they share a namespace, as in PostgreSQL).
func (snap *Snapshot) RelationExists(dbID uint64, name string) bool {
	if _, ok := snap.Table(dbID, name); ok {
		return true
	}
	if _, ok := snap.View(dbID, name); ok {
		return true
	}
	if _, ok := snap.Sequence(dbID, name); ok {
		return true
	}
	_, _, ok := snap.IndexByName(dbID, name)
	return ok
}
