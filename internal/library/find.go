package library

import (
	"sort"
	"strings"
)

// Find finds a case as the CLI and the MCP server take one: by its ID,
// case-insensitively, or by a prefix only one case ID starts with. When
// the prefix is shared, candidates lists the case IDs that start with it,
// sorted, and ok is false; when nothing matches, both are empty.
func (l *Library) Find(id string) (c Case, candidates []string, ok bool) {
	if c, ok := l.Case(id); ok {
		return c, nil, true
	}
	want := strings.ToLower(strings.TrimSpace(id))
	var prefixed []Case
	for _, c := range l.cases {
		if c.ID == want {
			return c, nil, true
		}
		if want != "" && strings.HasPrefix(c.ID, want) {
			prefixed = append(prefixed, c)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0], nil, true
	}
	for _, c := range prefixed {
		candidates = append(candidates, c.ID)
	}
	sort.Strings(candidates)
	return Case{}, candidates, false
}
