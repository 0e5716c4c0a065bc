// Package loadgen fills an API server with a realistic, reproducible
// cluster for kubegap's benchmarks: node pools of mixed OS images and
// runtimes with their status, DaemonSets with a pod on every node,
// Deployments with ReplicaSets, StatefulSets, pods in realistic states with
// owner references, PDBs, headless Services with EndpointSlices, Warning
// events and, last, admission webhooks. Every object follows from the seed
// and its index alone, so two runs with the same Spec build the same
// cluster whatever the order the workers happen to create it in.
package loadgen

import (
	"fmt"
	"math/rand/v2"
)

// Spec sizes the cluster.
type Spec struct {
	// Nodes is the number of nodes (at least 1).
	Nodes int
	// Pods is the number of pods in total, DaemonSet pods included. When it
	// is below what the DaemonSets alone need, the DaemonSets win.
	Pods int
	// Seed makes the cluster reproducible (default 1).
	Seed uint64
	// Workers is the number of concurrent create requests (default 64).
	Workers int
}

func (s *Spec) defaults() error {
	if s.Nodes < 1 {
		return fmt.Errorf("nodes must be at least 1, got %d", s.Nodes)
	}
	if s.Pods < 0 {
		return fmt.Errorf("pods must not be negative, got %d", s.Pods)
	}
	if s.Seed == 0 {
		s.Seed = 1
	}
	if s.Workers <= 0 {
		s.Workers = 64
	}
	return nil
}

// rng returns the random source of one object: the seed, a stream per kind
// of object and the object's index. Independent of creation order.
func (s *Spec) rng(stream, i uint64) *rand.Rand {
	return rand.New(rand.NewPCG(s.Seed^stream*0x9e3779b97f4a7c15, i))
}

// Random streams, one per kind of generated object.
const (
	streamNode uint64 = iota + 1
	streamWorkload
	streamPod
	streamEvent
)

// pool is a node pool: one cloud's labels, one OS image, one runtime.
type pool struct {
	name     string
	provider string // aks, eks, gke, kubeadm
	osImage  string
	kernel   string
	runtime  string
	kubelet  string
	weight   int
	system   bool // tainted for system pods only
}

// pools is the fleet's mix. Weights are relative shares of the nodes; a
// few pools lag behind the control plane, as real fleets do.
var pools = []pool{
	{"aks-system", "aks", "Ubuntu 22.04.5 LTS", "5.15.0-1089-azure", "containerd://1.7.27-1", "v1.37.2", 4, true},
	{"aks-ubuntu2404", "aks", "Ubuntu 24.04.2 LTS", "6.8.0-1029-azure", "containerd://2.0.5", "v1.37.2", 14, false},
	{"aks-azurelinux", "aks", "Microsoft Azure Linux 3.0", "6.6.85.1-2.azl3", "containerd://2.0.0", "v1.37.2", 10, false},
	{"aks-legacy2004", "aks", "Ubuntu 20.04.6 LTS", "5.15.0-1079-azure", "containerd://1.7.15-1", "v1.35.4", 6, false},
	{"eks-al2023", "eks", "Amazon Linux 2023.7.20250512", "6.1.134-152.225.amzn2023.x86_64", "containerd://1.7.27", "v1.37.1-eks-5e0fdde", 18, false},
	{"eks-bottlerocket", "eks", "Bottlerocket OS 1.39.1 (aws-k8s-1.37)", "6.1.134", "containerd://1.7.27+bottlerocket", "v1.37.1-eks-5e0fdde", 12, false},
	{"gke-cos", "gke", "Container-Optimized OS from Google", "6.6.87+", "containerd://2.0.4", "v1.37.0-gke.1200", 16, false},
	{"gke-ubuntu", "gke", "Ubuntu 22.04.5 LTS", "5.15.0-1080-gke", "containerd://1.7.27", "v1.36.4-gke.1100", 8, false},
	{"onprem-ubuntu2204", "kubeadm", "Ubuntu 22.04.5 LTS", "5.15.0-139-generic", "cri-o://1.31.5", "v1.36.3", 6, false},
	{"onprem-ubuntu2004", "kubeadm", "Ubuntu 20.04.6 LTS", "5.4.0-216-generic", "containerd://1.6.36", "v1.34.7", 6, false},
}

// poolOf returns the pool of node i: pools take contiguous runs of nodes in
// proportion to their weights, and every pool gets at least one node when
// there are enough nodes.
func poolOf(i, nodes int) *pool {
	total := 0
	for _, p := range pools {
		total += p.weight
	}
	acc := 0
	for k := range pools {
		acc += pools[k].weight
		if i < acc*nodes/total || k == len(pools)-1 {
			return &pools[k]
		}
	}
	return &pools[len(pools)-1]
}

func nodeName(i int) string { return fmt.Sprintf("node-%05d", i) }

// nsCount is the number of tenant namespaces: one per 400 pods, at least 4.
func nsCount(pods int) int { return max(4, pods/400) }

func tenantNS(i int) string { return fmt.Sprintf("team-%03d", i) }

// workload is one Deployment (with one ReplicaSet) or StatefulSet.
type workload struct {
	index      int
	namespace  string
	name       string
	app        string // an image family, e.g. "nginx"
	image      string
	pull       string // imagePullPolicy
	replicas   int
	stateful   bool
	pdb        int // 0 none, 1 minAvailable 1, 2 maxUnavailable 0 (blocks drains), 3 maxUnavailable 1
	hasService bool
	firstPod   int // index of its first pod in the pod stream
	rsHash     string
	hasInit    bool
	sidecar    bool
	crashRate  float64
}

var apps = []struct{ name, image string }{
	{"web", "registry.example.com/shop/web:4.12.0"},
	{"api", "registry.example.com/shop/api:2.31.7"},
	{"worker", "registry.example.com/shop/worker:2.31.7"},
	{"nginx", "docker.io/library/nginx:1.27.5"},
	{"redis", "docker.io/library/redis:7.4.3"},
	{"envoy", "docker.io/envoyproxy/envoy:v1.34.1"},
	{"payments", "123456789012.dkr.ecr.eu-west-1.amazonaws.com/payments:1.9.3"},
	{"search", "europe-docker.pkg.dev/acme/search/indexer:0.44.0"},
	{"auth", "acme.azurecr.io/auth/keycloak:26.2.4"},
	{"metrics", "quay.io/prometheus/node-exporter:v1.9.1"},
}

// workloads plans the Deployments and StatefulSets that carry the pods
// left after the DaemonSets. Replica counts are skewed as in real
// clusters: most workloads are small, a few are large.
func (s *Spec) workloads(pods int) []workload {
	var out []workload
	ns := nsCount(s.Pods)
	next := 0
	for i := 0; next < pods; i++ {
		r := s.rng(streamWorkload, uint64(i))
		replicas := 1 + r.IntN(6)
		switch x := r.IntN(100); {
		case x < 10:
			replicas = 20 + r.IntN(80)
		case x < 35:
			replicas = 6 + r.IntN(14)
		}
		replicas = min(replicas, pods-next)
		a := apps[r.IntN(len(apps))]
		w := workload{
			index:      i,
			namespace:  tenantNS(r.IntN(ns)),
			name:       fmt.Sprintf("%s-%04d", a.name, i),
			app:        a.name,
			image:      a.image,
			pull:       "IfNotPresent",
			replicas:   replicas,
			stateful:   r.IntN(100) < 6,
			hasService: r.IntN(100) < 25,
			firstPod:   next,
			rsHash:     hashName(r, 10),
			hasInit:    r.IntN(100) < 20,
			sidecar:    r.IntN(100) < 30,
			crashRate:  0.01,
		}
		if r.IntN(100) < 8 {
			w.pull = "Always"
		}
		if r.IntN(100) < 5 {
			w.crashRate = 0.5 // a workload in a crash loop
		}
		switch x := r.IntN(100); {
		case x < 25:
			w.pdb = 1
		case x < 30:
			w.pdb = 2
		case x < 40:
			w.pdb = 3
		}
		out = append(out, w)
		next += replicas
	}
	return out
}

const hashAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// hashName returns n characters in the alphabet Kubernetes uses for
// generated name suffixes.
func hashName(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = hashAlphabet[r.IntN(len(hashAlphabet))]
	}
	return string(b)
}

// podSuffix is the five-character suffix of pod idx: looks random, like
// the controllers' suffixes, but is a bijection of the index (27^5 names,
// multiplied by a number prime to 3), so no two pods ever share a name.
func (s *Spec) podSuffix(idx int) string {
	const space = 27 * 27 * 27 * 27 * 27
	v := (uint64(idx)*2654435761 + s.Seed*7919) % space
	b := make([]byte, 5)
	for i := range b {
		b[i] = hashAlphabet[v%27]
		v /= 27
	}
	return string(b)
}
