package raft

import "testing"

// TestLogStoreMemTableBytesFor: the log store's memtables are 1/64 of a
// small disk, never below 1 MiB nor above the 4 MiB default, and the
// default when the disk's size is unknown.
func TestLogStoreMemTableBytesFor(t *testing.T) {
	for _, c := range []struct{ total, want uint64 }{
		{0, 4 << 20},
		{16 << 20, 1 << 20},
		{64 << 20, 1 << 20},
		{128 << 20, 1 << 20},
		{256 << 20, 2 << 20},
		{1 << 30, 4 << 20},
		{1 << 40, 4 << 20},
	} {
		if got := LogStoreMemTableBytesFor(c.total); got != c.want {
			t.Errorf("LogStoreMemTableBytesFor(%d) = %d, want %d", c.total, got, c.want)
		}
	}
	cfg := HostConfig{Dir: "d", RaftAddress: "127.0.0.1:1"}
	got, err := cfg.withDefaults()
	if err != nil || got.LogStoreMemTableBytes != 4<<20 {
		t.Fatalf("withDefaults: %d, %v; want the 4 MiB default", got.LogStoreMemTableBytes, err)
	}
	if got := logStoreConfig(1 << 20).KVWriteBufferSize; got != 1<<20 {
		t.Errorf("logStoreConfig(1 MiB) writes buffers of %d", got)
	}
	cfg.LogStoreMemTableBytes = 64 << 10
	if _, err := cfg.withDefaults(); err == nil {
		t.Error("a 64 KiB log store memtable was accepted")
	}
}

// TestMayCampaignAlone: a founding replica that is its group's only
// initial member, as a voter, and a restarted voter are watched for an
// early campaign (campaign.go); joining replicas, non-voters and founders
// of groups of several are not.
func TestMayCampaignAlone(t *testing.T) {
	one := map[ReplicaID]string{1: "a:1"}
	for _, c := range []struct {
		spec ReplicaSpec
		want bool
	}{
		{ReplicaSpec{Group: 1, Replica: 1, InitialMembers: one}, true},
		{ReplicaSpec{Group: 1, Replica: 2, InitialMembers: one}, false},
		{ReplicaSpec{Group: 1, Replica: 1, InitialMembers: map[ReplicaID]string{1: "a:1", 2: "b:1"}}, false},
		{ReplicaSpec{Group: 1, Replica: 1, InitialMembers: one, NonVoter: true}, false},
		{ReplicaSpec{Group: 1, Replica: 1, Join: true}, false},
		{ReplicaSpec{Group: 1, Replica: 1}, true}, // a restart: its membership decides
		{ReplicaSpec{Group: 1, Replica: 1, NonVoter: true}, false},
	} {
		if got := mayCampaignAlone(c.spec); got != c.want {
			t.Errorf("mayCampaignAlone(%+v) = %v, want %v", c.spec, got, c.want)
		}
	}
}
