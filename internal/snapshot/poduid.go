package snapshot

import (
	"strings"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/types"
)

// A PodUID is a pod's metadata.uid in 24 bytes instead of 64 (a string
// header and its 36 bytes rounded up to 48): the API server makes every
// UID a UUID, held here as its 16 bytes; any other value, such as a
// hand-written file's, is held as its text. At 1M pods that is 40 MB.
type PodUID struct {
	uuid  [16]byte
	other *string // when not a UUID in the API server's spelling
}

// MakePodUID returns uid as a PodUID. Only a UUID spelt as the API server
// spells one (lower-case hex, 8-4-4-4-12) is held as bytes, so that UID
// gives back exactly what was read.
func MakePodUID(uid types.UID) PodUID {
	var u PodUID
	if uid == "" {
		return u
	}
	if parseUUID(string(uid), &u.uuid) && u.uuid != [16]byte{} {
		return u
	}
	s := string(uid)
	return PodUID{other: &s}
}

// parseUUID reads s into b when s is a UUID in lower-case hex, 8-4-4-4-12:
// uuid.Parse takes other spellings too (upper case, braces, a urn: prefix,
// no hyphens), which would not come back as they were read.
func parseUUID(s string, b *[16]byte) bool {
	if len(s) != 36 || strings.ContainsAny(s, "ABCDEF") {
		return false
	}
	u, err := uuid.Parse(s)
	if err != nil {
		return false
	}
	*b = u
	return true
}

// IsZero reports whether the pod has no UID (a manifest written by hand).
func (u PodUID) IsZero() bool { return u.other == nil && u.uuid == [16]byte{} }

// UID returns the UID as it was read.
func (u PodUID) UID() types.UID { return types.UID(u.String()) }

// String returns the UID as it was read, "" for none.
func (u PodUID) String() string {
	switch {
	case u.other != nil:
		return *u.other
	case u.uuid == [16]byte{}:
		return ""
	}
	return uuid.UUID(u.uuid).String()
}

// Is reports whether the UID is uid, without spelling it out.
func (u PodUID) Is(uid types.UID) bool {
	if u.other != nil {
		return *u.other == string(uid)
	}
	var b [16]byte
	if !parseUUID(string(uid), &b) {
		return uid == "" && u.IsZero()
	}
	return b == u.uuid && b != [16]byte{}
}

// MarshalText writes the UID as it was read, so that a Pod encodes its UID
// as a string.
func (u PodUID) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalText reads a UID.
func (u *PodUID) UnmarshalText(b []byte) error {
	*u = MakePodUID(types.UID(b))
	return nil
}
