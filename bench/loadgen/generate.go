package loadgen

import (
	"crypto/sha256"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// UID is the UID Generate gives an object: a UUID made from a hash of its
// kind, namespace and name (version and variant bits set as for a
// name-based UUID), so that owner references can be written before or
// after their owner and two runs agree. An API server would give a random
// one.
func UID(kind, namespace, name string) types.UID {
	h := sha256.Sum256([]byte(kind + "/" + namespace + "/" + name))
	h[6] = h[6]&0x0f | 0x80 // version 8: custom
	h[8] = h[8]&0x3f | 0x80 // RFC 9562 variant
	return types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16]))
}

// Generate produces, without an API server, the objects Run creates for
// spec, each in the state Run leaves it (statuses set), and calls emit once
// for each: typed API objects (*corev1.Pod, *appsv1.Deployment, ...) with
// UIDs from UID and no server fields (resource versions, managedFields,
// creation timestamps). Nothing is held beyond one workload's pod states,
// so any size runs in bounded memory; the order is fixed (the webhooks
// last, as in Run), and the objects are Run's, object for object.
func Generate(spec Spec, emit func(runtime.Object) error) error {
	if err := spec.defaults(); err != nil {
		return err
	}
	setUID := func(kind string, m metav1.Object) {
		m.SetUID(UID(kind, m.GetNamespace(), m.GetName()))
	}
	dsPods := spec.Nodes * len(daemonSets)
	webhookPods := 0
	for _, b := range webhookBackends {
		webhookPods += b.pods
	}
	plan := spec.workloads(max(0, spec.Pods-dsPods-webhookPods))

	// pod finishes a pod as Run's pod does (status, then events).
	pod := func(p *corev1.Pod, st podState, idx, node int) error {
		setUID("Pod", p)
		hostIP, osImage := "", ""
		if node >= 0 {
			hostIP = nodeIP(node)
			osImage = poolOf(node, spec.Nodes).osImage
		}
		podStatus(p, st, idx, hostIP)
		events := podEvents(p, st, idx, osImage)
		if err := emit(p); err != nil {
			return err
		}
		for _, e := range events {
			setUID("Event", e)
			if err := emit(e); err != nil {
				return err
			}
		}
		return nil
	}

	nsNames := []string{webhookNS}
	for i := range nsCount(spec.Pods) {
		nsNames = append(nsNames, tenantNS(i))
	}
	for _, name := range nsNames {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": name}}}
		setUID("Namespace", ns)
		if err := emit(ns); err != nil {
			return err
		}
	}
	for i := range spec.Nodes {
		n := spec.node(i)
		setUID("Node", n)
		spec.nodeStatus(n, i)
		if err := emit(n); err != nil {
			return err
		}
	}
	dsUIDs := make([]types.UID, len(daemonSets))
	for i, d := range daemonSets {
		ds := spec.daemonSet(d)
		setUID("DaemonSet", ds)
		dsUIDs[i] = ds.UID
		spec.daemonSetStatus(ds)
		if err := emit(ds); err != nil {
			return err
		}
	}
	for i := range dsPods {
		n, d := i/len(daemonSets), i%len(daemonSets)
		p, st := spec.dsPod(d, dsUIDs[d], n)
		if err := pod(p, st, i, n); err != nil {
			return err
		}
	}
	states := make([]podState, 0, 100)
	for wi := range plan {
		w := &plan[wi]
		owner := UID("StatefulSet", w.namespace, w.name)
		if !w.stateful {
			owner = UID("ReplicaSet", w.namespace, w.name+"-"+w.rsHash)
		}
		states = states[:0]
		for j := range w.replicas {
			p, st := spec.workloadPod(w, owner, j)
			states = append(states, st)
			node := -1
			if p.Spec.NodeName != "" {
				fmt.Sscanf(p.Spec.NodeName, "node-%d", &node)
			}
			if err := pod(p, st, dsPods+w.firstPod+j, node); err != nil {
				return err
			}
		}
		if err := generateWorkload(w, states, spec.Nodes, setUID, emit); err != nil {
			return err
		}
	}

	podIdx := spec.Nodes*len(daemonSets) + spec.Pods // as in Run's webhooks
	for bi, b := range webhookBackends {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: b.name, Namespace: webhookNS},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": b.name},
				Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstrPort(10250)}}}}
		setUID("Service", svc)
		if err := emit(svc); err != nil {
			return err
		}
		var eps []discoveryv1.Endpoint
		for j := range b.pods {
			idx := podIdx + bi*10 + j
			node := (bi*7 + j*13) % spec.Nodes
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", b.name, j), Namespace: webhookNS, Labels: map[string]string{"app": b.name}},
				Spec: corev1.PodSpec{NodeName: nodeName(node), Containers: []corev1.Container{{Name: b.name,
					Image: "registry.example.com/platform/" + b.name + ":1.4.2", Ports: []corev1.ContainerPort{{ContainerPort: 10250}}}}},
			}
			if err := pod(p, podRunning, idx, node); err != nil {
				return err
			}
			eps = append(eps, discoveryv1.Endpoint{Addresses: []string{podIP(idx)}, NodeName: ptr(nodeName(node)),
				Conditions: discoveryv1.EndpointConditions{Ready: ptr(true)},
				TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: webhookNS, Name: p.Name}})
		}
		es := endpointSlice(webhookNS, b.name, 0, eps)
		es.Ports = []discoveryv1.EndpointPort{{Name: ptr("https"), Port: ptr(int32(10250)), Protocol: ptr(corev1.ProtocolTCP)}}
		setUID("EndpointSlice", es)
		if err := emit(es); err != nil {
			return err
		}
	}
	validating, mutating := webhookConfigs()
	for _, v := range validating {
		setUID("ValidatingWebhookConfiguration", v)
		if err := emit(v); err != nil {
			return err
		}
	}
	for _, m := range mutating {
		setUID("MutatingWebhookConfiguration", m)
		if err := emit(m); err != nil {
			return err
		}
	}
	return nil
}

// generateWorkload emits a workload's objects with the statuses Run's
// workloadExtras sets from its pods' states.
func generateWorkload(w *workload, states []podState, nodes int, setUID func(string, metav1.Object), emit func(runtime.Object) error) error {
	ready := 0
	var eps []discoveryv1.Endpoint
	for j, st := range states {
		if st == podRunning {
			ready++
		}
		if w.hasService && st != podUnschedulable && st != podSandboxFailing {
			eps = append(eps, discoveryv1.Endpoint{Addresses: []string{podIP(len(daemonSets)*nodes + w.firstPod + j)},
				Conditions: discoveryv1.EndpointConditions{Ready: ptr(st == podRunning)}})
		}
	}
	r, rd := int32(w.replicas), int32(ready)
	if w.stateful {
		s := w.statefulSet()
		setUID("StatefulSet", s)
		s.Status = appsv1.StatefulSetStatus{ObservedGeneration: s.Generation, Replicas: r, ReadyReplicas: rd, CurrentReplicas: r,
			UpdatedReplicas: r, AvailableReplicas: rd, CurrentRevision: w.name + "-" + w.rsHash, UpdateRevision: w.name + "-" + w.rsHash}
		if err := emit(s); err != nil {
			return err
		}
	} else {
		d := w.deployment()
		setUID("Deployment", d)
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: r, UpdatedReplicas: r, ReadyReplicas: rd,
			AvailableReplicas: rd, UnavailableReplicas: r - rd, Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: map[bool]corev1.ConditionStatus{true: corev1.ConditionTrue, false: corev1.ConditionFalse}[rd*4 >= r*3],
					Reason: "MinimumReplicasAvailable", LastUpdateTime: ts(0), LastTransitionTime: ts(0)},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable",
					LastUpdateTime: ts(0), LastTransitionTime: ts(0)}}}
		rs := w.replicaSet(d.UID)
		setUID("ReplicaSet", rs)
		rs.Status = appsv1.ReplicaSetStatus{ObservedGeneration: rs.Generation, Replicas: r, FullyLabeledReplicas: r,
			ReadyReplicas: rd, AvailableReplicas: rd}
		if err := emit(d); err != nil {
			return err
		}
		if err := emit(rs); err != nil {
			return err
		}
	}
	if w.pdb != 0 {
		p := w.pdbObject()
		setUID("PodDisruptionBudget", p)
		w.pdbStatus(p, ready)
		if err := emit(p); err != nil {
			return err
		}
	}
	if w.hasService {
		svc := w.service()
		setUID("Service", svc)
		if err := emit(svc); err != nil {
			return err
		}
		for part := 0; part*100 < len(eps) || part == 0; part++ {
			es := endpointSlice(w.namespace, w.name, part, eps[part*100:min(len(eps), part*100+100)])
			setUID("EndpointSlice", es)
			if err := emit(es); err != nil {
				return err
			}
		}
	}
	return nil
}
