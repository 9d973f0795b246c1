package sql

// InitialParameters are the ParameterStatus messages sent after startup.
func (s *Session) InitialParameters() []ParameterStatus {
	s.vars.Init("session_authorization", s.user)
	return s.vars.Reported()
}

// TakeParameterChanges returns (and forgets) the reportable parameters that
// changed since the last call, for ParameterStatus messages.
func (s *Session) TakeParameterChanges() []ParameterStatus {
	return s.vars.TakeChanged()
}

// SetStartupParameter applies a parameter sent in the startup message
// (application_name, client_encoding, DateStyle, options...). Unknown ones
// are refused like SET would refuse them.
func (s *Session) SetStartupParameter(name, value string) error {
	// The client set it, so it does not need reporting back as a change,
	// but the initial ParameterStatus round reports the value anyway.
	// Like PostgreSQL, RESET returns to it (it overrides ALTER DATABASE/
	// ROLE ... SET, which newSession applied).
	return s.vars.SetDefault(name, value)
}
