// Package realmanifests holds only a test: every registered check run over
// popular public charts and manifests, rendered at default values beside a
// realistic 300-node pool, with every finding at medium or above judged in
// expectations.yaml. See realmanifests_test.go.
package realmanifests
