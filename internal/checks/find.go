package checks

import (
	"sort"
	"strings"
)

// Find finds a check as the CLI and the MCP server take one: by its ID,
// case-insensitively, or by a prefix only one check ID starts with. When
// the prefix is shared, candidates lists the check IDs that start with
// it, sorted, and ok is false; when nothing matches, both are empty.
func Find(id string) (c Check, candidates []string, ok bool) {
	if c, ok := Lookup(id); ok {
		return c, nil, true
	}
	want := strings.ToLower(strings.TrimSpace(id))
	var found []Check
	for _, c := range All() {
		if c.ID == want {
			return c, nil, true
		}
		if want != "" && strings.HasPrefix(c.ID, want) {
			found = append(found, c)
		}
	}
	if len(found) == 1 {
		return found[0], nil, true
	}
	for _, c := range found {
		candidates = append(candidates, c.ID)
	}
	sort.Strings(candidates)
	return Check{}, candidates, false
}
