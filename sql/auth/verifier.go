package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/xdg-go/scram"
)

const (
	// Iterations is the PBKDF2 iteration count of new verifiers:
	// PostgreSQL's default scram_iterations.
	Iterations = 4096
	// SaltLen is the length of a new verifier's random salt, in bytes
	// (PostgreSQL's SCRAM_DEFAULT_SALT_LEN).
	SaltLen = 16
	// MaxIterations bounds the iteration count accepted from a verifier
	// given in CREATE USER: clients must run that many PBKDF2 rounds at
	// every login, and a huge count is more likely corruption than intent.
	MaxIterations = 1 << 24

	prefix = "SCRAM-SHA-256$"
)

// HashPassword returns the verifier of password with a fresh random salt.
// The password is normalised with SASLprep as PostgreSQL and SCRAM clients
// do; a password SASLprep rejects (prohibited characters) is used as raw
// bytes, which is also what libpq and PostgreSQL do.
func HashPassword(password string) (string, error) {
	salt := make([]byte, SaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	return hashWithSalt(password, salt, Iterations)
}

func hashWithSalt(password string, salt []byte, iters int) (string, error) {
	c, err := scram.SHA256.NewClient("", password, "")
	if err != nil {
		c, err = scram.SHA256.NewClientUnprepped("", password, "")
		if err != nil {
			return "", err
		}
	}
	sc, err := c.GetStoredCredentialsWithError(scram.KeyFactors{Salt: string(salt), Iters: iters})
	if err != nil {
		return "", err
	}
	return Format(sc), nil
}

// Format renders stored credentials in PostgreSQL's text form.
func Format(sc scram.StoredCredentials) string {
	enc := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("%s%d:%s$%s:%s", prefix, sc.Iters, enc([]byte(sc.Salt)), enc(sc.StoredKey), enc(sc.ServerKey))
}

// IsVerifier reports whether s looks like a SCRAM-SHA-256 verifier rather
// than a password (PostgreSQL's rule: a password given in that form is
// taken as already hashed). Parse says whether it is a valid one.
func IsVerifier(s string) bool { return strings.HasPrefix(s, prefix) }

// Parse reads a verifier in PostgreSQL's text form.
func Parse(s string) (scram.StoredCredentials, error) {
	var sc scram.StoredCredentials
	bad := func(why string) (scram.StoredCredentials, error) {
		return sc, fmt.Errorf("invalid SCRAM-SHA-256 verifier: %s", why)
	}
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return bad("missing SCRAM-SHA-256$ prefix")
	}
	factors, keys, ok := strings.Cut(rest, "$")
	if !ok {
		return bad("missing keys")
	}
	iterText, saltText, ok := strings.Cut(factors, ":")
	if !ok {
		return bad("missing salt")
	}
	iters, err := strconv.Atoi(iterText)
	if err != nil || iters < 1 || iters > MaxIterations {
		return bad("bad iteration count")
	}
	salt, err := base64.StdEncoding.DecodeString(saltText)
	if err != nil || len(salt) == 0 {
		return bad("bad salt")
	}
	storedText, serverText, ok := strings.Cut(keys, ":")
	if !ok {
		return bad("missing server key")
	}
	stored, err1 := base64.StdEncoding.DecodeString(storedText)
	server, err2 := base64.StdEncoding.DecodeString(serverText)
	if err1 != nil || err2 != nil || len(stored) != 32 || len(server) != 32 {
		return bad("bad keys")
	}
	sc.Salt = string(salt)
	sc.Iters = iters
	sc.StoredKey = stored
	sc.ServerKey = server
	return sc, nil
}

// CheckPassword reports whether password is the one sc was made from: the
// check of a password sent in the clear (`--auth password`,
// AuthenticationCleartextPassword) against the SCRAM verifier stored for
// it, as PostgreSQL's scram_verify_plain_password does: the password,
// normalised with SASLprep (raw when SASLprep rejects it, as HashPassword
// does), is hashed with the verifier's salt and iteration count, and both
// keys must match. It costs the verifier's PBKDF2 rounds whatever the
// outcome.
func CheckPassword(sc scram.StoredCredentials, password string) (bool, error) {
	c, err := scram.SHA256.NewClient("", password, "")
	if err != nil {
		c, err = scram.SHA256.NewClientUnprepped("", password, "")
		if err != nil {
			return false, err
		}
	}
	got, err := c.GetStoredCredentialsWithError(sc.KeyFactors)
	if err != nil {
		return false, err
	}
	storedOK := subtle.ConstantTimeCompare(got.StoredKey, sc.StoredKey) == 1
	serverOK := subtle.ConstantTimeCompare(got.ServerKey, sc.ServerKey) == 1
	return storedOK && serverOK, nil
}
