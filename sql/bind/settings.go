package bind

// setting reads a boolean planner switch of the session (enable_indexscan,
// enable_hashjoin); without session settings (tests binding on their own)
// every switch is on. A plan keeps the switches of the moment it was bound.
func (a *binder) setting(name string) bool {
	return a.env.Settings == nil || a.env.Settings.Enabled(name)
}
