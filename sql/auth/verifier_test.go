package auth

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/xdg-go/scram"
)

// TestRoundTripAndLogin hashes a password and logs in with it.
func TestRoundTripAndLogin(t *testing.T) {
	v, err := HashPassword("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v, "SCRAM-SHA-256$4096:") || strings.Count(v, "$") != 2 {
		t.Fatalf("verifier %q", v)
	}
	sc, err := Parse(v)
	if err != nil {
		t.Fatal(err)
	}
	if Format(sc) != v {
		t.Fatalf("format(parse(v)) = %q, want %q", Format(sc), v)
	}
	// Another hash of the same password uses another salt.
	v2, _ := HashPassword("s3cret")
	if v2 == v {
		t.Fatal("two verifiers share a salt")
	}
	for _, tc := range []struct {
		pw string
		ok bool
	}{{"s3cret", true}, {"wrong", false}, {"", false}} {
		if got := login(t, sc, tc.pw); got != tc.ok {
			t.Errorf("login with %q: %v, want %v", tc.pw, got, tc.ok)
		}
	}
}

// login runs a full SCRAM exchange between xdg-go's client and server.
func login(t *testing.T, sc scram.StoredCredentials, pw string) bool {
	t.Helper()
	srv, err := scram.SHA256.NewServer(func(string) (scram.StoredCredentials, error) { return sc, nil })
	if err != nil {
		t.Fatal(err)
	}
	cl, err := scram.SHA256.NewClient("", pw, "")
	if err != nil {
		t.Fatal(err)
	}
	cc, sconv := cl.NewConversation(), srv.NewConversation()
	msg, err := cc.Step("")
	for err == nil && !sconv.Done() {
		msg, err = sconv.Step(msg)
		if err != nil {
			break
		}
		msg, err = cc.Step(msg)
	}
	return err == nil && sconv.Valid()
}

// TestRFC7677 replays the SCRAM-SHA-256 example of RFC 7677 section 3
// (password "pencil") against a verifier computed by HashPassword's code
// from the example's salt: the server must accept the RFC's client proof
// and answer with the RFC's server signature.
func TestRFC7677(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	v, err := hashWithSalt("pencil", salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Parse(v)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := scram.SHA256.NewServer(func(string) (scram.StoredCredentials, error) { return sc, nil })
	if err != nil {
		t.Fatal(err)
	}
	srv = srv.WithNonceGenerator(func() string { return "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0" })
	conv := srv.NewConversation()
	s1, err := conv.Step("n,,n=user,r=rOprNGfwEbeRWgbNEkqO")
	if err != nil {
		t.Fatal(err)
	}
	if want := "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"; s1 != want {
		t.Fatalf("server-first %q, want %q", s1, want)
	}
	s2, err := conv.Step("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
	if err != nil {
		t.Fatal(err)
	}
	if want := "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="; s2 != want || !conv.Valid() {
		t.Fatalf("server-final %q (valid %v), want %q", s2, conv.Valid(), want)
	}
}

func TestParseRejects(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(make([]byte, 32))
	for _, s := range []string{
		"",
		"md5abc",
		"SCRAM-SHA-256$",
		"SCRAM-SHA-256$4096:c2FsdA==",
		"SCRAM-SHA-256$x:c2FsdA==$" + key + ":" + key,
		"SCRAM-SHA-256$0:c2FsdA==$" + key + ":" + key,
		"SCRAM-SHA-256$4096:!!$" + key + ":" + key,
		"SCRAM-SHA-256$4096:c2FsdA==$" + key,
		"SCRAM-SHA-256$4096:c2FsdA==$c2FsdA==:" + key,
	} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
	if _, err := Parse("SCRAM-SHA-256$4096:c2FsdA==$" + key + ":" + key); err != nil {
		t.Errorf("valid verifier rejected: %v", err)
	}
}

// TestCheckPassword checks passwords sent in the clear against verifiers:
// the right one, wrong ones, the empty one, a password SASLprep normalises
// (a soft hyphen maps to nothing, as in the client's SCRAM) and one it
// rejects (a control character: hashed raw, as HashPassword does).
func TestCheckPassword(t *testing.T) {
	for _, tc := range []struct {
		stored, sent string
		ok           bool
	}{
		{"s3cret", "s3cret", true},
		{"s3cret", "s3creT", false},
		{"s3cret", "", false},
		{"IX", "I\u00adX", true},
		{"a\u0007b", "a\u0007b", true},
		{"a\u0007b", "ab", false},
	} {
		v, err := HashPassword(tc.stored)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := Parse(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := CheckPassword(sc, tc.sent)
		if err != nil || got != tc.ok {
			t.Errorf("stored %q, sent %q: %v (%v), want %v", tc.stored, tc.sent, got, err, tc.ok)
		}
	}
}
