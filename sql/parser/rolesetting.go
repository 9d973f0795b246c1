package parser

// RoleSetting is ALTER DATABASE d SET/RESET ... or ALTER ROLE|USER r [IN
// DATABASE d] SET/RESET ...: a setting sessions start with (PostgreSQL's
// pg_db_role_setting). Exactly one of Set and Reset is set.
type RoleSetting struct {
	// Database is the database name ("" for ALTER ROLE without IN
	// DATABASE: every database).
	Database string
	// Role is the role name ("" for ALTER DATABASE: every role); AllRoles
	// is set for ALTER ROLE ALL.
	Role     string
	AllRoles bool
	Set      *SetVar
	Reset    *ResetVar
}

// parseRoleSetting parses the SET/RESET forms of ALTER DATABASE and ALTER
// ROLE|USER; ok is false for any other ALTER.
func (s *stmtToks) parseRoleSetting() (rs *RoleSetting, ok bool, err error) {
	rs = &RoleSetting{}
	i := 2
	switch {
	case s.isWord(1, "database"):
		name, named := s.objectName(i)
		if !named {
			return nil, true, s.errAtTok(i)
		}
		rs.Database = name
		i++
	case s.isWord(1, "role") || s.isWord(1, "user"):
		if s.isWord(i, "all") {
			rs.AllRoles = true
		} else {
			name, named := s.objectName(i)
			if !named {
				return nil, true, s.errAtTok(i)
			}
			rs.Role = name
		}
		i++
		if s.isWord(i, "in") {
			if !s.isWord(i+1, "database") {
				return nil, true, s.errAtTok(i + 1)
			}
			name, named := s.objectName(i + 2)
			if !named {
				return nil, true, s.errAtTok(i + 2)
			}
			rs.Database = name
			i += 3
		}
	default:
		return nil, false, nil
	}
	if !s.isWord(i, "set") && !s.isWord(i, "reset") {
		// ALTER ROLE r WITH ..., ALTER DATABASE d RENAME ...: not this.
		return nil, false, nil
	}
	// The SET/RESET tail is parsed as the statement it looks like.
	sub := s.from(i)
	if s.isWord(i, "set") {
		sv, txn, handled, err := sub.parseSet()
		if err != nil {
			return nil, true, err
		}
		if !handled || txn != nil || sv.Local {
			return nil, true, s.errAtTok(i + 1)
		}
		rs.Set = sv
	} else {
		if rs.Reset, err = sub.parseReset(); err != nil {
			return nil, true, err
		}
	}
	return rs, true, nil
}

// from is the tail of the statement starting at token i, as a statement of
// its own.
func (s *stmtToks) from(i int) *stmtToks {
	sub := *s
	sub.toks = s.toks[i:]
	sub.match = make([]int32, len(s.match)-i)
	for k, m := range s.match[i:] {
		if m >= 0 {
			m -= int32(i)
		}
		sub.match[k] = m
	}
	return &sub
}
