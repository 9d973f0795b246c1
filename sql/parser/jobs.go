package parser

import (
	"strconv"
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// JobKind is which jobs statement (CockroachDB's names).
type JobKind uint8

const (
	JobShowAll JobKind = iota + 1 // SHOW JOBS
	JobShow                       // SHOW JOB id
	JobCancel                     // CANCEL JOB id
	JobPause                      // PAUSE JOB id
	JobResume                     // RESUME JOB id
)

// JobStmt is SHOW JOBS, SHOW JOB id, CANCEL JOB id, PAUSE JOB id or
// RESUME JOB id (package jobs; sys.jobs).
type JobStmt struct {
	Kind JobKind
	ID   int64 // all but SHOW JOBS
}

// parseJob parses a jobs statement; handled is false when the tokens are
// not one (SHOW of a setting, say). The first token is SHOW, CANCEL, PAUSE
// or RESUME.
func (s *stmtToks) parseJob() (*JobStmt, bool, error) {
	first := s.text(0)
	if s.isWord(0, "show") {
		if s.isWord(1, "jobs") && s.atEnd(2) {
			return &JobStmt{Kind: JobShowAll}, true, nil
		}
		if !s.isWord(1, "job") || s.atEnd(2) {
			return nil, false, nil
		}
	} else if !s.isWord(1, "job") {
		if s.isWord(1, "jobs") {
			return nil, true, errAt(sqlerr.FeatureNotSupported, s.start(1), "%s JOBS is not supported yet: name one job, %s JOB id", strings.ToUpper(first), strings.ToUpper(first))
		}
		return nil, false, nil
	}
	kind := map[string]JobKind{"show": JobShow, "cancel": JobCancel, "pause": JobPause, "resume": JobResume}[strings.ToLower(first)]
	if !s.isKind(2, tkNumber) {
		return nil, true, s.errAtTok(2)
	}
	id, err := strconv.ParseInt(s.text(2), 10, 64)
	if err != nil {
		return nil, true, s.errAtTok(2)
	}
	if !s.atEnd(3) {
		return nil, true, s.errAtTok(3)
	}
	return &JobStmt{Kind: kind, ID: id}, true, nil
}
