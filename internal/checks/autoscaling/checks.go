// Package autoscaling holds the checks about HorizontalPodAutoscalers and
// the metrics they scale on.
package autoscaling

import "github.com/kubegap/kubegap/internal/check"

// Checks lists this area's checks, one constructor per line.
func Checks() []check.Check {
	return []check.Check{
		hpaMetricSourceCheck(),
		vpaEvictionLoopCheck(),
		kedaPodIdentityRemovalCheck(),
		hpaReplicasAppliedCheck(),
	}
}
