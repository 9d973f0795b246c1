package placement

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/pivotdb/pivotdb/cluster/kvsm"
	"github.com/pivotdb/pivotdb/cluster/node"
)

// Localities (serve --locality az=NAME,rack=R; CockroachDB's --locality):
// ordered key=value tiers, the widest first. Each node records its own in
// the metadata group when its manager starts:
//
//	"node-locality/" + id (8 BE)   the canonical locality string
//
// The allocator spreads a group's voters over distinct values of the first
// tier (plan.go); sys.nodes shows the whole string.
const (
	keyLocality    = "node-locality/"
	keyLocalityEnd = "node-locality0" // '/'+1
)

func localityKey(id uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte(keyLocality), id)
}

// ParseLocality validates a --locality value and returns it canonical
// (no spaces): comma-separated key=value tiers, keys unique, both made of
// letters, digits, '-', '_' and '.'. "" is no locality.
func ParseLocality(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	seen := map[string]bool{}
	var tiers []string
	for _, t := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(t), "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case !ok:
			return "", fmt.Errorf("locality %q: tier %q is not key=value", s, strings.TrimSpace(t))
		case k == "" || v == "":
			return "", fmt.Errorf("locality %q: tier %q has an empty key or value", s, strings.TrimSpace(t))
		case !localityWord(k) || !localityWord(v):
			return "", fmt.Errorf("locality %q: tier %q: keys and values are letters, digits, '-', '_' and '.'", s, strings.TrimSpace(t))
		case seen[k]:
			return "", fmt.Errorf("locality %q: key %q is given twice", s, k)
		}
		seen[k] = true
		tiers = append(tiers, k+"="+v)
	}
	return strings.Join(tiers, ","), nil
}

func localityWord(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// firstTier is a locality's widest tier ("az=a" of "az=a,rack=1"), the
// allocator's zone.
func firstTier(locality string) string {
	t, _, _ := strings.Cut(locality, ",")
	return t
}

// recordLocality writes this node's locality, an empty one included: a
// node without a record has not recorded it yet (localityKnownLocked), so
// the read-replica round does not take it for a zone of its own.
func (m *Manager) recordLocality(ctx context.Context) error {
	h := m.cfg.Node.Host()
	v, err := h.Read(ctx, node.MetaGroup, kvsm.Get{Key: localityKey(m.self)})
	if err != nil {
		return err
	}
	if r := v.(kvsm.GetResult); r.Found && string(r.Value) == m.cfg.Locality {
		return nil
	}
	return m.metaPut(ctx, kvsm.Op{Kind: kvsm.OpPut, Key: localityKey(m.self), Value: []byte(m.cfg.Locality)})
}

func (m *Manager) readLocalities(ctx context.Context) (map[uint64]string, error) {
	v, err := m.cfg.Node.Host().Read(ctx, node.MetaGroup, kvsm.Scan{Start: []byte(keyLocality), End: []byte(keyLocalityEnd)})
	if err != nil {
		return nil, err
	}
	out := map[uint64]string{}
	for _, kv := range v.([]kvsm.KV) {
		if len(kv.Key) == len(keyLocality)+8 {
			out[binary.BigEndian.Uint64(kv.Key[len(keyLocality):])] = string(kv.Value)
		}
	}
	return out, nil
}

// localityKnownLocked reports whether node id's locality was read (m.mu
// held): a node records it when it starts, shortly after it joined.
func (m *Manager) localityKnownLocked(id uint64) bool {
	_, ok := m.localities[id]
	return ok || id == m.self
}

// zoneLocked is node id's zone as last read (m.mu held).
func (m *Manager) zoneLocked(id uint64) string {
	if id == m.self {
		return firstTier(m.cfg.Locality)
	}
	return firstTier(m.localities[id])
}
