//go:build invariants || race

package storage

// invariantsEnabled turns on the self-checks that are too costly for
// production but cheap enough for tests: every iterator step verifies that
// keys ascend (or descend) and stay inside the span. They are on in race
// builds, which is how the tests run (go test -race), and with -tags
// invariants. Pebble uses the same convention for its own checks.
const invariantsEnabled = true
