//go:build !invariants && !race

package storage

// invariantsEnabled: see invariants_on.go.
const invariantsEnabled = false
