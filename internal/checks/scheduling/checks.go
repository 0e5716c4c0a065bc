// Package scheduling holds the checks about where pods can run: node
// selectors, node affinity and tolerations judged against the nodes.
package scheduling

import "github.com/kubegap/kubegap/internal/check"

// Checks returns the area's checks, one constructor per line.
func Checks() []check.Check {
	return []check.Check{
		selectorMatchesNoNodeCheck(),
		removedNodeLabelsCheck(),
		pendingNoRoomCheck(),
	}
}
