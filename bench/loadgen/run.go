package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Stats says what Run created and how fast.
type Stats struct {
	// Objects counts created objects by kind.
	Objects map[string]int
	// Requests is the number of write requests (creates and status updates).
	Requests int64
	// Elapsed is the wall time of the whole load.
	Elapsed time.Duration
	// Phases is the wall time of each phase, in order.
	Phases []Phase
}

// Phase is one step of the load.
type Phase struct {
	Name     string
	Objects  int
	Requests int64
	Elapsed  time.Duration
}

// Total is the number of objects created.
func (s Stats) Total() int {
	n := 0
	for _, v := range s.Objects {
		n += v
	}
	return n
}

// String summarises the load in one line per phase.
func (s Stats) String() string {
	var b strings.Builder
	for _, p := range s.Phases {
		fmt.Fprintf(&b, "  %-16s %7d objects %8d requests %7.1f s %8.0f req/s\n", p.Name, p.Objects, p.Requests,
			p.Elapsed.Seconds(), float64(p.Requests)/max(p.Elapsed.Seconds(), 1e-9))
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(s.Objects)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, s.Objects[k]))
	}
	fmt.Fprintf(&b, "  total %d objects, %d requests in %.1f s: %.0f objects/s, %.0f requests/s\n  (%s)",
		s.Total(), s.Requests, s.Elapsed.Seconds(), float64(s.Total())/max(s.Elapsed.Seconds(), 1e-9),
		float64(s.Requests)/max(s.Elapsed.Seconds(), 1e-9), strings.Join(parts, ", "))
	return b.String()
}

// ClientConfig returns cfg tuned for loading: protobuf bodies and no
// client-side rate limit (the server's inflight limits and APF decide).
func ClientConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.ContentType = "application/vnd.kubernetes.protobuf"
	c.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	c.QPS = -1
	c.RateLimiter = nil
	c.UserAgent = "kubegap-loadgen"
	return c
}

// gen holds one load's state.
type gen struct {
	spec     Spec
	cs       kubernetes.Interface
	log      io.Writer
	requests atomic.Int64
	mu       sync.Mutex
	objects  map[string]int
}

// Run creates the cluster spec describes through cs, which should act as a
// cluster admin (built from ClientConfig for speed). Progress goes to log.
// The API server must be empty of the generated names: Run does not update
// existing objects.
func Run(ctx context.Context, cs kubernetes.Interface, spec Spec, log io.Writer) (Stats, error) {
	if err := spec.defaults(); err != nil {
		return Stats{}, err
	}
	if log == nil {
		log = io.Discard
	}
	g := &gen{spec: spec, cs: cs, log: log, objects: map[string]int{}}
	began := time.Now()
	var st Stats

	dsPods := spec.Nodes * len(daemonSets)
	webhookPods := 0
	for _, b := range webhookBackends {
		webhookPods += b.pods
	}
	plan := spec.workloads(max(0, spec.Pods-dsPods-webhookPods))
	nsNames := []string{webhookNS}
	for i := range nsCount(spec.Pods) {
		nsNames = append(nsNames, tenantNS(i))
	}

	var dsUIDs []types.UID
	owners := make([]types.UID, len(plan)) // the pods' controller: ReplicaSet or StatefulSet
	workloadPods := 0
	for _, w := range plan {
		workloadPods += w.replicas
	}
	// By pod index, for the statuses of owners and PDBs.
	states := make([]podState, dsPods+workloadPods)

	phases := []struct {
		name string
		fn   func(context.Context) (int, error)
	}{
		{"namespaces", func(ctx context.Context) (int, error) {
			return len(nsNames), g.parallel(ctx, len(nsNames), func(ctx context.Context, i int) error {
				return g.create(ctx, "Namespace", func() error {
					_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsNames[i],
						Labels: map[string]string{"team": nsNames[i]}}}, metav1.CreateOptions{})
					return err
				})
			})
		}},
		{"nodes", func(ctx context.Context) (int, error) {
			return spec.Nodes, g.parallel(ctx, spec.Nodes, func(ctx context.Context, i int) error {
				var n *corev1.Node
				if err := g.create(ctx, "Node", func() (err error) {
					n, err = cs.CoreV1().Nodes().Create(ctx, spec.node(i), metav1.CreateOptions{})
					return err
				}); err != nil {
					return err
				}
				spec.nodeStatus(n, i)
				return g.write(ctx, func() error {
					_, err := cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
					return err
				})
			})
		}},
		{"daemonsets", func(ctx context.Context) (int, error) {
			dsUIDs = make([]types.UID, len(daemonSets))
			return len(daemonSets), g.parallel(ctx, len(daemonSets), func(ctx context.Context, i int) error {
				var ds *appsv1.DaemonSet
				if err := g.create(ctx, "DaemonSet", func() (err error) {
					ds, err = cs.AppsV1().DaemonSets(metav1.NamespaceSystem).Create(ctx, spec.daemonSet(daemonSets[i]), metav1.CreateOptions{})
					return err
				}); err != nil {
					return err
				}
				dsUIDs[i] = ds.UID
				spec.daemonSetStatus(ds)
				return g.write(ctx, func() error {
					_, err := cs.AppsV1().DaemonSets(metav1.NamespaceSystem).UpdateStatus(ctx, ds, metav1.UpdateOptions{})
					return err
				})
			})
		}},
		{"workloads", func(ctx context.Context) (int, error) {
			return len(plan), g.parallel(ctx, len(plan), func(ctx context.Context, i int) error {
				uid, err := g.workload(ctx, &plan[i])
				owners[i] = uid
				return err
			})
		}},
		{"daemonset pods", func(ctx context.Context) (int, error) {
			return dsPods, g.parallel(ctx, dsPods, func(ctx context.Context, i int) error {
				n, d := i/len(daemonSets), i%len(daemonSets)
				p, st := spec.dsPod(d, dsUIDs[d], n)
				states[i] = st
				return g.pod(ctx, p, st, i, n)
			})
		}},
		{"workload pods", func(ctx context.Context) (int, error) {
			total := workloadPods
			// Flatten (workload, replica) so that big workloads spread
			// over all workers.
			return total, g.parallel(ctx, total, func(ctx context.Context, k int) error {
				wi := sort.Search(len(plan), func(i int) bool { return plan[i].firstPod+plan[i].replicas > k })
				w := &plan[wi]
				p, st := spec.workloadPod(w, owners[wi], k-w.firstPod)
				states[dsPods+k] = st
				node := -1
				if p.Spec.NodeName != "" {
					fmt.Sscanf(p.Spec.NodeName, "node-%d", &node)
				}
				return g.pod(ctx, p, st, dsPods+k, node)
			})
		}},
		{"workload status", func(ctx context.Context) (int, error) {
			return len(plan), g.parallel(ctx, len(plan), func(ctx context.Context, i int) error {
				return g.workloadExtras(ctx, &plan[i], states[dsPods:])
			})
		}},
		{"webhooks", func(ctx context.Context) (int, error) {
			return len(webhookBackends), g.webhooks(ctx)
		}},
	}
	for _, ph := range phases {
		t0, r0 := time.Now(), g.requests.Load()
		n, err := ph.fn(ctx)
		p := Phase{Name: ph.name, Objects: n, Requests: g.requests.Load() - r0, Elapsed: time.Since(t0)}
		st.Phases = append(st.Phases, p)
		fmt.Fprintf(log, "loadgen: %-16s %7d in %6.1f s (%.0f requests/s)\n", ph.name, n, p.Elapsed.Seconds(),
			float64(p.Requests)/max(p.Elapsed.Seconds(), 1e-9))
		if err != nil {
			return st, fmt.Errorf("loading %s: %w", ph.name, err)
		}
	}
	st.Objects = g.objects
	st.Requests = g.requests.Load()
	st.Elapsed = time.Since(began)
	return st, nil
}

// parallel runs fn for 0..n-1 on the spec's workers and returns the first
// error, after which no new index starts.
func (g *gen) parallel(ctx context.Context, n int, fn func(context.Context, int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(g.spec.Workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := fn(ctx, i); err != nil {
					cancel(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

// create runs a create request, with retries, and counts the object.
func (g *gen) create(ctx context.Context, kind string, fn func() error) error {
	if err := g.write(ctx, fn); err != nil {
		return fmt.Errorf("creating a %s: %w", kind, err)
	}
	g.mu.Lock()
	g.objects[kind]++
	g.mu.Unlock()
	return nil
}

// write runs one write request, retrying what an overloaded server answers.
func (g *gen) write(ctx context.Context, fn func() error) error {
	wait := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		g.requests.Add(1)
		err := fn()
		if err == nil || attempt == 8 || !retryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

func retryable(err error) bool {
	if apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// pod creates a pod and then sets its status, as the kubelet would.
func (g *gen) pod(ctx context.Context, p *corev1.Pod, st podState, idx, node int) error {
	pods := g.cs.CoreV1().Pods(p.Namespace)
	var created *corev1.Pod
	if err := g.create(ctx, "Pod", func() (err error) {
		created, err = pods.Create(ctx, p, metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	hostIP := ""
	osImage := ""
	if node >= 0 {
		hostIP = nodeIP(node)
		osImage = poolOf(node, g.spec.Nodes).osImage
	}
	podStatus(created, st, idx, hostIP)
	if err := g.write(ctx, func() error {
		_, err := pods.UpdateStatus(ctx, created, metav1.UpdateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("setting the status of pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	for _, e := range podEvents(created, st, idx, osImage) {
		if err := g.create(ctx, "Event", func() error {
			_, err := g.cs.CoreV1().Events(e.Namespace).Create(ctx, e, metav1.CreateOptions{})
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}

// workload creates a Deployment and its ReplicaSet, or a StatefulSet, and
// returns the UID of the pods' controller.
func (g *gen) workload(ctx context.Context, w *workload) (types.UID, error) {
	apps := g.cs.AppsV1()
	if w.stateful {
		var sts *appsv1.StatefulSet
		err := g.create(ctx, "StatefulSet", func() (err error) {
			sts, err = apps.StatefulSets(w.namespace).Create(ctx, w.statefulSet(), metav1.CreateOptions{})
			return err
		})
		if err != nil {
			return "", err
		}
		return sts.UID, nil
	}
	var dep *appsv1.Deployment
	if err := g.create(ctx, "Deployment", func() (err error) {
		dep, err = apps.Deployments(w.namespace).Create(ctx, w.deployment(), metav1.CreateOptions{})
		return err
	}); err != nil {
		return "", err
	}
	var rs *appsv1.ReplicaSet
	if err := g.create(ctx, "ReplicaSet", func() (err error) {
		rs, err = apps.ReplicaSets(w.namespace).Create(ctx, w.replicaSet(dep.UID), metav1.CreateOptions{})
		return err
	}); err != nil {
		return "", err
	}
	return rs.UID, nil
}

// workloadExtras sets a workload's status from its pods' states, and
// creates its PDB and Service with EndpointSlices.
func (g *gen) workloadExtras(ctx context.Context, w *workload, states []podState) error {
	ready, scheduled := 0, 0
	var eps []discoveryv1.Endpoint
	for j := range w.replicas {
		st := states[w.firstPod+j]
		if st == podRunning {
			ready++
		}
		if st != podUnschedulable {
			scheduled++
		}
		if w.hasService && st != podUnschedulable && st != podSandboxFailing {
			eps = append(eps, discoveryv1.Endpoint{Addresses: []string{podIP(len(daemonSets)*g.spec.Nodes + w.firstPod + j)},
				Conditions: discoveryv1.EndpointConditions{Ready: ptr(st == podRunning)}})
		}
	}
	apps := g.cs.AppsV1()
	r, rd := int32(w.replicas), int32(ready)
	if w.stateful {
		err := g.write(ctx, func() error {
			s, err := apps.StatefulSets(w.namespace).Get(ctx, w.name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			s.Status = appsv1.StatefulSetStatus{ObservedGeneration: s.Generation, Replicas: r, ReadyReplicas: rd, CurrentReplicas: r,
				UpdatedReplicas: r, AvailableReplicas: rd, CurrentRevision: w.name + "-" + w.rsHash, UpdateRevision: w.name + "-" + w.rsHash}
			_, err = apps.StatefulSets(w.namespace).UpdateStatus(ctx, s, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("status of statefulset %s/%s: %w", w.namespace, w.name, err)
		}
	} else {
		err := g.write(ctx, func() error {
			d, err := apps.Deployments(w.namespace).Get(ctx, w.name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: r, UpdatedReplicas: r, ReadyReplicas: rd,
				AvailableReplicas: rd, UnavailableReplicas: r - rd, Conditions: []appsv1.DeploymentCondition{
					{Type: appsv1.DeploymentAvailable, Status: map[bool]corev1.ConditionStatus{true: corev1.ConditionTrue, false: corev1.ConditionFalse}[rd*4 >= r*3],
						Reason: "MinimumReplicasAvailable", LastUpdateTime: ts(0), LastTransitionTime: ts(0)},
					{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable",
						LastUpdateTime: ts(0), LastTransitionTime: ts(0)}}}
			_, err = apps.Deployments(w.namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("status of deployment %s/%s: %w", w.namespace, w.name, err)
		}
		err = g.write(ctx, func() error {
			rs, err := apps.ReplicaSets(w.namespace).Get(ctx, w.name+"-"+w.rsHash, metav1.GetOptions{})
			if err != nil {
				return err
			}
			rs.Status = appsv1.ReplicaSetStatus{ObservedGeneration: rs.Generation, Replicas: r, FullyLabeledReplicas: r,
				ReadyReplicas: rd, AvailableReplicas: rd}
			_, err = apps.ReplicaSets(w.namespace).UpdateStatus(ctx, rs, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("status of replicaset %s/%s-%s: %w", w.namespace, w.name, w.rsHash, err)
		}
	}
	if w.pdb != 0 {
		pdbs := g.cs.PolicyV1().PodDisruptionBudgets(w.namespace)
		var p *policyv1.PodDisruptionBudget
		if err := g.create(ctx, "PodDisruptionBudget", func() (err error) {
			p, err = pdbs.Create(ctx, w.pdbObject(), metav1.CreateOptions{})
			return err
		}); err != nil {
			return err
		}
		w.pdbStatus(p, ready)
		if err := g.write(ctx, func() error {
			_, err := pdbs.UpdateStatus(ctx, p, metav1.UpdateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("status of pdb %s/%s: %w", w.namespace, w.name, err)
		}
	}
	if w.hasService {
		if err := g.create(ctx, "Service", func() error {
			_, err := g.cs.CoreV1().Services(w.namespace).Create(ctx, w.service(), metav1.CreateOptions{})
			return err
		}); err != nil {
			return err
		}
		for part := 0; part*100 < len(eps) || part == 0; part++ {
			chunk := eps[part*100 : min(len(eps), part*100+100)]
			if err := g.create(ctx, "EndpointSlice", func() error {
				_, err := g.cs.DiscoveryV1().EndpointSlices(w.namespace).Create(ctx, endpointSlice(w.namespace, w.name, part, chunk), metav1.CreateOptions{})
				return err
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// webhooks creates the webhook backends (Service, EndpointSlice, pods) and
// then the webhook configurations. It runs last: once a Fail webhook on
// pods exists, this API server can create no more pods.
func (g *gen) webhooks(ctx context.Context) error {
	podIdx := g.spec.Nodes*len(daemonSets) + g.spec.Pods // beyond every other pod's IP
	for bi, b := range webhookBackends {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: b.name, Namespace: webhookNS},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": b.name},
				Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstrPort(10250)}}}}
		if err := g.create(ctx, "Service", func() error {
			_, err := g.cs.CoreV1().Services(webhookNS).Create(ctx, svc, metav1.CreateOptions{})
			return err
		}); err != nil {
			return err
		}
		var eps []discoveryv1.Endpoint
		for j := range b.pods {
			idx := podIdx + bi*10 + j
			node := (bi*7 + j*13) % g.spec.Nodes
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", b.name, j), Namespace: webhookNS, Labels: map[string]string{"app": b.name}},
				Spec: corev1.PodSpec{NodeName: nodeName(node), Containers: []corev1.Container{{Name: b.name,
					Image: "registry.example.com/platform/" + b.name + ":1.4.2", Ports: []corev1.ContainerPort{{ContainerPort: 10250}}}}},
			}
			if err := g.pod(ctx, p, podRunning, idx, node); err != nil {
				return err
			}
			eps = append(eps, discoveryv1.Endpoint{Addresses: []string{podIP(idx)}, NodeName: ptr(nodeName(node)),
				Conditions: discoveryv1.EndpointConditions{Ready: ptr(true)},
				TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: webhookNS, Name: p.Name}})
		}
		es := endpointSlice(webhookNS, b.name, 0, eps)
		es.Ports = []discoveryv1.EndpointPort{{Name: ptr("https"), Port: ptr(int32(10250)), Protocol: ptr(corev1.ProtocolTCP)}}
		if err := g.create(ctx, "EndpointSlice", func() error {
			_, err := g.cs.DiscoveryV1().EndpointSlices(webhookNS).Create(ctx, es, metav1.CreateOptions{})
			return err
		}); err != nil {
			return err
		}
	}
	validating, mutating := webhookConfigs()
	adm := g.cs.AdmissionregistrationV1()
	for _, v := range validating {
		if err := g.create(ctx, "ValidatingWebhookConfiguration", func() error {
			_, err := adm.ValidatingWebhookConfigurations().Create(ctx, v, metav1.CreateOptions{})
			return err
		}); err != nil {
			return err
		}
	}
	for _, m := range mutating {
		if err := g.create(ctx, "MutatingWebhookConfiguration", func() error {
			_, err := adm.MutatingWebhookConfigurations().Create(ctx, m, metav1.CreateOptions{})
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}
