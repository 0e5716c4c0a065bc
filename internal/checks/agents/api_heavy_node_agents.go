package agents

import (
	_ "embed"
	"errors"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/api-heavy-node-agents.yaml
var agentFactsYAML []byte

type fanInFact struct {
	Name           string   `json:"name"`
	AgentDaemonSet string   `json:"agentDaemonSet"`
	FanInImage     string   `json:"fanInImage"`
	Nodes          int      `json:"nodes"`
	Fact           string   `json:"fact"`
	Sources        []string `json:"sources"`
}

type kubeletModeFact struct {
	Name    string   `json:"name"`
	Images  []string `json:"images"`
	Setting string   `json:"setting"`
	Fact    string   `json:"fact"`
	Sources []string `json:"sources"`
}

type agentFacts struct {
	FanIn       []fanInFact       `json:"fanIn"`
	KubeletMode []kubeletModeFact `json:"kubeletMode"`
}

var loadAgentFacts = check.Facts("node agent facts", agentFactsYAML, func(f *agentFacts) error {
	if len(f.FanIn) == 0 || len(f.KubeletMode) == 0 {
		return errors.New("node agent facts: fanIn and kubeletMode are required")
	}
	return nil
})

// Policy, not fact: how many copies of one cluster-wide reader make a load
// worth a finding. The cited clusters fell over with agents on 225 to
// thousands of nodes; every node's agent holds its own LIST and watch.
const (
	readersWarn = 200
	readersHigh = 1000
	// Secrets: every copy holds every Secret of the cluster, and one
	// Deployment's Secret reads alone drove 100 MB/s out of etcd.
	secretReadersWarn = 50
	secretReadersHigh = 500
	// fanInHigh: Calico without Typha at this size is where the cited
	// API server gave way (225 and 700 nodes).
	fanInHigh = 200
)

// heavyResources are the kinds whose cluster-wide LIST grows with the
// cluster: one object per pod, node or endpoint.
var heavyResources = []struct{ group, resource string }{
	{"", "pods"}, {"", "nodes"}, {"", "endpoints"}, {"discovery.k8s.io", "endpointslices"},
}

// logAgentImages name log shippers, whose metadata filters read pods.
var logAgentImages = []string{"fluent-bit", "aws-for-fluent-bit", "fluentd", "fluentd-kubernetes-daemonset"}

func apiHeavyNodeAgentsCheck() check.Check {
	return check.Check{
		ID:       "api-heavy-node-agents",
		Title:    "Per-node agents that each list and watch the whole cluster",
		Severity: finding.High,
		Description: "Follows each DaemonSet's ServiceAccount through ClusterRoleBindings to ClusterRoles (aggregated " +
			"roles and wildcards included) and reports agents allowed to list or watch pods, nodes, endpoints or " +
			"EndpointSlices cluster-wide, weighted by the nodes they run on (status.desiredNumberScheduled, else the " +
			"nodes whose labels match their nodeSelector and required node affinity and whose taints they tolerate): " +
			"every node's copy keeps its own LIST and watch, so the load grows with " +
			"nodes times cluster size, and a restart or an API server failover sends all the full LISTs at once. " +
			"Medium from 200 nodes, high from 1,000 (policy); agents allowed to list Secrets cluster-wide from 50 and " +
			"500. Calico's calico-node without a Typha Deployment is reported above the 50 nodes at which Calico " +
			"recommends Typha, high from 200. Fluent Bit with Use_Kubelet in its arguments reads pod metadata from the " +
			"kubelet and is not counted; its configuration file, in a ConfigMap kubegap does not read, is not seen. " +
			"RBAC is what an agent may do, not what it does: an informer-based agent may read far less. An agent whose " +
			"template tells it its own node's name (an environment variable from the downward API's spec.nodeName, or " +
			"a --node-name, --nodeid or --hostname-override argument) is wired for a field selector on its node, so " +
			"its pod and node reads are reported as low; endpoint and Secret reads are not bounded by a node name, and " +
			"log agents and calico-node (which without Typha lists every pod itself) are not lowered.",
		Reads: []check.Input{
			check.Optional(snapshot.DaemonSets),
			check.Optional(snapshot.ClusterRoles),
			check.Optional(snapshot.ClusterRoleBindings),
			check.Optional(snapshot.Deployments),
			check.Optional(snapshot.Nodes),
		},
		Rules: []check.Rule{
			{ID: "cluster-wide-readers", Summary: "DaemonSets allowed to list or watch pods, nodes, endpoints or Secrets cluster-wide, on many nodes",
				Needs: []snapshot.Resource{snapshot.DaemonSets, snapshot.ClusterRoles, snapshot.ClusterRoleBindings}},
			{ID: "calico-without-typha", Summary: "calico-node on more than 50 nodes without Typha",
				Needs: []snapshot.Resource{snapshot.DaemonSets, snapshot.Deployments}},
		},
		Cases: check.Cite(check.Prevents(
			"calico-node-full-resync-list-storm-eks-2021",
			"logging-daemonset-metadata-apiserver-flood-2020",
			"rancher-fleet-agent-secret-list-etcd-read-2023",
		), check.Detects("openai-telemetry-apiserver-overload-2024")),
		Run: runAPIHeavyNodeAgents,
	}
}
