"""Helpers that build kubectl-style objects for the managed-cluster fixtures.

Each provider script (aks.py, eks.py, ...) describes one fresh cluster with
these helpers and writes it as a recipe dump. Tests read only the JSON; the
scripts exist so that a change to every pod (a new field, a new add-on) is
one edit and a regeneration. Names, UIDs, digests and pod suffixes are
derived from hashes of names, so a regeneration rewrites only what changed.
"""
import hashlib
import json
import os


def uid(*parts):
    h = hashlib.sha256("/".join(parts).encode()).hexdigest()
    return f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def hexid(n, *parts):
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:n]


POD_SUFFIX_CHARS = "bcdfghjklmnpqrstvwxz2456789"


def podsuffix(n, *parts):
    h = hashlib.sha256("/".join(parts).encode()).digest()
    return "".join(POD_SUFFIX_CHARS[b % len(POD_SUFFIX_CHARS)] for b in h[:n])


def ctr(name, image, **kw):
    c = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent",
         "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
         "resources": kw.pop("resources", {"requests": {"cpu": "10m", "memory": "20Mi"}})}
    c.update(kw)
    return c


def hp(name, path, typ=None):
    v = {"name": name, "hostPath": {"path": path}}
    if typ:
        v["hostPath"]["type"] = typ
    return v



class Cluster:
    def __init__(self, name, created):
        self.name = name
        self.created = created  # RFC 3339, the cluster's creation time
        self.items = {k: [] for k in (
            "nodes", "namespaces", "pods", "services", "events",
            "daemonsets.apps", "deployments.apps", "replicasets.apps", "statefulsets.apps",
            "poddisruptionbudgets.policy", "endpointslices.discovery.k8s.io",
            "validatingwebhookconfigurations.admissionregistration.k8s.io",
            "mutatingwebhookconfigurations.admissionregistration.k8s.io",
            # Kinds a fresh cluster of these shapes has none of: no
            # workload, autoscaler or Ingress has been created yet.
            "cronjobs.batch", "jobs.batch", "horizontalpodautoscalers.autoscaling",
            "ingresses.networking.k8s.io", "ingressclasses.networking.k8s.io",
            # Only aggregated APIServices (see apiservice below).
            "apiservices.apiregistration.k8s.io",
            # Storage: the built-in classes and drivers; no volumes yet.
            "storageclasses.storage.k8s.io", "csidrivers.storage.k8s.io", "persistentvolumes", "persistentvolumeclaims",
            "csistoragecapacities.storage.k8s.io",
            # No LimitRange is created by these fixtures' clusters.
            "limitranges")}
        self.nodes = []
        self.ip = 10
        self.pod_ip = 10

    # --- metadata -------------------------------------------------------
    def meta(self, kind, name, ns=None, labels=None, annotations=None, owner=None, created=None):
        m = {"name": name, "uid": uid(self.name, kind, ns or "", name),
             "resourceVersion": str(1000 + int(hexid(6, self.name, "rv", kind, ns or "", name), 16) % 90000),
             "creationTimestamp": created or self.created}
        if ns:
            m["namespace"] = ns
        if labels:
            m["labels"] = dict(labels)
        if annotations:
            m["annotations"] = dict(annotations)
        if owner:
            m["ownerReferences"] = [owner]
        return m

    # --- cluster-scoped ---------------------------------------------------
    def namespace(self, name, labels=None):
        lb = {"kubernetes.io/metadata.name": name}
        lb.update(labels or {})
        self.items["namespaces"].append({
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": self.meta("Namespace", name, labels=lb),
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"}})

    def node(self, name, labels, provider_id, info, internal_ip, taints=None, capacity=None, created=None,
             reserved_memory_ki=None):
        """reserved_memory_ki(capacity_ki, max_pods) is the provider's memory
        reservation plus eviction threshold, in KiB: allocatable memory is
        capacity less that. None: allocatable equals capacity."""
        lb = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
              "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64"}
        lb.update(labels)
        cap = capacity or {"cpu": "4", "memory": "16374588Ki", "pods": "110", "ephemeral-storage": "129886128Ki"}
        alloc = dict(cap)
        if reserved_memory_ki:
            mem_ki = int(cap["memory"].removesuffix("Ki"))
            alloc["memory"] = f"{mem_ki - reserved_memory_ki(mem_ki, int(cap['pods'])):d}Ki"
        spec = {"providerID": provider_id}
        if taints:
            spec["taints"] = taints
        ni = {"architecture": "amd64", "operatingSystem": "linux",
              "bootID": uid(self.name, "boot", name), "machineID": hexid(32, self.name, "machine", name),
              "systemUUID": uid(self.name, "system", name)}
        ni.update(info)
        ni.setdefault("kubeProxyVersion", "")
        ts = created or self.created
        conds = []
        for t, reason, msg in (
                ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available")):
            conds.append({"type": t, "status": "False", "reason": reason, "message": msg,
                          "lastHeartbeatTime": "2026-11-30T23:58:00Z", "lastTransitionTime": ts})
        conds.append({"type": "Ready", "status": "True", "reason": "KubeletReady",
                      "message": "kubelet is posting ready status",
                      "lastHeartbeatTime": "2026-11-30T23:58:00Z", "lastTransitionTime": ts})
        self.items["nodes"].append({
            "apiVersion": "v1", "kind": "Node",
            "metadata": self.meta("Node", name, labels=lb, created=ts),
            "spec": spec,
            "status": {"addresses": [{"type": "InternalIP", "address": internal_ip},
                                     {"type": "Hostname", "address": name}],
                       "capacity": cap, "allocatable": alloc, "conditions": conds,
                       "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                       "nodeInfo": ni}})
        self.nodes.append({"name": name, "ip": internal_ip, "labels": lb, "taints": taints or []})

    # --- pods ------------------------------------------------------------
    def next_pod_ip(self, prefix):
        self.pod_ip += 1
        return f"{prefix}.{self.pod_ip}"

    def pod(self, name, ns, template, node, owner=None, host_network=False, pod_ip=None,
            extra_tolerations=None, annotations=None, phase="Running", started=None, mirror=False):
        spec = json.loads(json.dumps(template["spec"]))
        spec["nodeName"] = node["name"]
        spec.setdefault("restartPolicy", "Always")
        spec.setdefault("dnsPolicy", "ClusterFirst")
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("terminationGracePeriodSeconds", 30)
        spec.setdefault("enableServiceLinks", True)
        spec.setdefault("securityContext", {})
        if "serviceAccountName" in spec:
            spec["serviceAccount"] = spec["serviceAccountName"]
        tol = list(spec.get("tolerations", []))
        for t in extra_tolerations or []:
            if t not in tol:
                tol.append(t)
        if tol:
            spec["tolerations"] = tol
        ip = node["ip"] if host_network else (pod_ip or self.next_pod_ip(self.pod_cidr))
        labels = dict(template.get("metadata", {}).get("labels", {}))
        ann = dict(template.get("metadata", {}).get("annotations", {}))
        ann.update(annotations or {})
        start = started or self.created
        statuses = []
        for c in spec.get("containers", []):
            statuses.append(self.container_status(c, start, phase))
        init_statuses = []
        for c in spec.get("initContainers", []):
            s = self.container_status(c, start, "Succeeded")
            init_statuses.append(s)
        ready = "True" if phase == "Running" else "False"
        status = {"phase": phase, "hostIP": node["ip"], "hostIPs": [{"ip": node["ip"]}],
                  "podIP": ip, "podIPs": [{"ip": ip}], "startTime": start,
                  "qosClass": "Burstable",
                  "conditions": [
                      {"type": "PodReadyToStartContainers", "status": "True" if phase == "Running" else "False",
                       "lastTransitionTime": start},
                      {"type": "Initialized", "status": "True", "lastTransitionTime": start},
                      {"type": "Ready", "status": ready, "lastTransitionTime": start,
                       **({} if phase == "Running" else {"reason": "PodCompleted"})},
                      {"type": "ContainersReady", "status": ready, "lastTransitionTime": start,
                       **({} if phase == "Running" else {"reason": "PodCompleted"})},
                      {"type": "PodScheduled", "status": "True", "lastTransitionTime": start}],
                  "containerStatuses": statuses}
        if init_statuses:
            status["initContainerStatuses"] = init_statuses
        if mirror:
            ann["kubernetes.io/config.mirror"] = hexid(32, self.name, "mirror", name)
            ann["kubernetes.io/config.source"] = "file"
            ann["kubernetes.io/config.hash"] = ann["kubernetes.io/config.mirror"]
        obj = {"apiVersion": "v1", "kind": "Pod",
               "metadata": self.meta("Pod", name, ns, labels=labels, annotations=ann or None, owner=owner,
                                     created=start),
               "spec": spec, "status": status}
        self.items["pods"].append(obj)
        return obj

    def container_status(self, c, start, phase):
        image = c["image"]
        repo = image.split("@")[0].rsplit(":", 1)[0] if ":" in image.split("/")[-1] else image.split("@")[0]
        digest = "sha256:" + hexid(64, "digest", image)
        if phase == "Succeeded":
            state = {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": start, "finishedAt": start,
                                    "containerID": "containerd://" + hexid(64, "ctr", c["name"], start, image)}}
            ready = phase == "Succeeded" and False
        else:
            state = {"running": {"startedAt": start}}
            ready = True
        pulled = normalize_image(image)
        s = {"name": c["name"], "image": pulled, "imageID": repo_for_id(pulled) + "@" + digest,
             "ready": ready, "restartCount": 0, "started": phase != "Succeeded", "state": state,
             "lastState": {}}
        if phase != "Succeeded":
            s["containerID"] = "containerd://" + hexid(64, "ctr", c["name"], start, image)
        else:
            s["containerID"] = state["terminated"]["containerID"]
            s["started"] = False
        return s

    # --- workloads -------------------------------------------------------
    def daemonset(self, name, ns, labels, template, nodes, host_network=False, pod_ip_prefix=None,
                  update=None, generation=1):
        sel = template["metadata"]["labels"]
        ds_uid = uid(self.name, "DaemonSet", ns, name)
        tmpl_hash = podsuffix(9, self.name, "ds", name)
        n = len(nodes)
        obj = {"apiVersion": "apps/v1", "kind": "DaemonSet",
               "metadata": self.meta("DaemonSet", name, ns, labels=labels,
                                     annotations={"deprecated.daemonset.template.generation": str(generation)}),
               "spec": {"selector": {"matchLabels": {k: v for k, v in sel.items() if k in template.get("selectorKeys", sel)}},
                        "template": {k: v for k, v in template.items() if k != "selectorKeys"},
                        "updateStrategy": update or {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
                        "revisionHistoryLimit": 10},
               "status": {"currentNumberScheduled": n, "desiredNumberScheduled": n, "numberAvailable": n,
                          "numberMisscheduled": 0, "numberReady": n, "observedGeneration": generation,
                          "updatedNumberScheduled": n}}
        obj["metadata"]["generation"] = generation
        self.items["daemonsets.apps"].append(obj)
        owner = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": name, "uid": ds_uid,
                 "controller": True, "blockOwnerDeletion": True}
        ds_tol = [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
            {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]
        if host_network:
            ds_tol.append({"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"})
        tmpl = {"metadata": {"labels": dict(template["metadata"]["labels"],
                                            **{"controller-revision-hash": tmpl_hash, "pod-template-generation": str(generation)}),
                             "annotations": template["metadata"].get("annotations", {})},
                "spec": template["spec"]}
        pods = []
        for nd in nodes:
            pname = f"{name}-{podsuffix(5, self.name, name, nd['name'])}"
            spec_aff = tmpl["spec"]
            t = {"metadata": tmpl["metadata"], "spec": dict(spec_aff)}
            t["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [nd["name"]]}]}]}}}
            pods.append(self.pod(pname, ns, t, nd, owner=owner, host_network=host_network, extra_tolerations=ds_tol))
        return obj, pods

    def deployment(self, name, ns, labels, template, replicas, nodes, strategy=None, pod_hash=None,
                   annotations=None, selector=None):
        sel = selector or template["metadata"]["labels"]
        h = pod_hash or podsuffix(10, self.name, "rs", name)
        dep_uid = uid(self.name, "Deployment", ns, name)
        obj = {"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": self.meta("Deployment", name, ns, labels=labels,
                                     annotations=dict({"deployment.kubernetes.io/revision": "1"}, **(annotations or {}))),
               "spec": {"replicas": replicas, "selector": {"matchLabels": sel},
                        "strategy": strategy or {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
                        "template": template, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600},
               "status": {"observedGeneration": 1, "replicas": replicas, "updatedReplicas": replicas,
                          "readyReplicas": replicas, "availableReplicas": replicas,
                          "conditions": [
                              {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                               "message": "Deployment has minimum availability.",
                               "lastUpdateTime": self.created, "lastTransitionTime": self.created},
                              {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
                               "message": f'ReplicaSet "{name}-{h}" has successfully progressed.',
                               "lastUpdateTime": self.created, "lastTransitionTime": self.created}]}}
        obj["metadata"]["generation"] = 1
        self.items["deployments.apps"].append(obj)
        rs_name = f"{name}-{h}"
        rs_uid = uid(self.name, "ReplicaSet", ns, rs_name)
        rs_labels = dict(template["metadata"]["labels"], **{"pod-template-hash": h})
        rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
              "metadata": self.meta("ReplicaSet", rs_name, ns, labels=rs_labels,
                                    annotations={"deployment.kubernetes.io/desired-replicas": str(replicas),
                                                 "deployment.kubernetes.io/max-replicas": str(replicas + 1),
                                                 "deployment.kubernetes.io/revision": "1"},
                                    owner={"apiVersion": "apps/v1", "kind": "Deployment", "name": name,
                                           "uid": dep_uid, "controller": True, "blockOwnerDeletion": True}),
              "spec": {"replicas": replicas, "selector": {"matchLabels": dict(sel, **{"pod-template-hash": h})},
                       "template": {"metadata": dict(template["metadata"], labels=rs_labels), "spec": template["spec"]}},
              "status": {"replicas": replicas, "fullyLabeledReplicas": replicas, "readyReplicas": replicas,
                         "availableReplicas": replicas, "observedGeneration": 1}}
        rs["metadata"]["generation"] = 1
        self.items["replicasets.apps"].append(rs)
        owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs_name, "uid": rs_uid,
                 "controller": True, "blockOwnerDeletion": True}
        dep_tol = [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                   {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]
        pods = []
        for i in range(replicas):
            nd = nodes[i % len(nodes)]
            pname = f"{rs_name}-{podsuffix(5, self.name, rs_name, str(i))}"
            pods.append(self.pod(pname, ns, {"metadata": {"labels": rs_labels,
                                                          "annotations": template["metadata"].get("annotations", {})},
                                             "spec": template["spec"]},
                                 nd, owner=owner, host_network=template["spec"].get("hostNetwork", False),
                                 extra_tolerations=dep_tol))
        return obj, pods

    # --- services and endpoints ------------------------------------------
    def service(self, name, ns, selector, ports, cluster_ip, labels=None, annotations=None, svc_type="ClusterIP",
                pods=None, lb_ingress=None):
        spec = {"type": svc_type, "selector": selector, "ports": ports, "clusterIP": cluster_ip,
                "clusterIPs": [cluster_ip], "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
                "internalTrafficPolicy": "Cluster", "sessionAffinity": "None"}
        status = {"loadBalancer": {}}
        if svc_type == "LoadBalancer":
            spec["externalTrafficPolicy"] = "Cluster"
            spec["allocateLoadBalancerNodePorts"] = True
            if lb_ingress:
                status = {"loadBalancer": {"ingress": [{"ip": ip, "ipMode": "VIP"} for ip in lb_ingress]}}
        self.items["services"].append({
            "apiVersion": "v1", "kind": "Service",
            "metadata": self.meta("Service", name, ns, labels=labels, annotations=annotations),
            "spec": spec, "status": status})
        if pods is not None:
            self.endpointslice(name, ns, ports, pods, labels)

    def endpointslice(self, svc, ns, ports, pods, svc_labels=None):
        name = f"{svc}-{podsuffix(5, self.name, 'eps', svc)}"
        labels = dict(svc_labels or {})
        labels.update({"kubernetes.io/service-name": svc,
                       "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"})
        eps = []
        for p in pods:
            eps.append({"addresses": [p["status"]["podIP"]],
                        "conditions": {"ready": True, "serving": True, "terminating": False},
                        "nodeName": p["spec"]["nodeName"],
                        "targetRef": {"kind": "Pod", "namespace": ns, "name": p["metadata"]["name"],
                                      "uid": p["metadata"]["uid"]}})
        self.items["endpointslices.discovery.k8s.io"].append({
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": self.meta("EndpointSlice", name, ns, labels=labels,
                                  owner={"apiVersion": "v1", "kind": "Service", "name": svc,
                                         "uid": uid(self.name, "Service", ns, svc),
                                         "controller": True, "blockOwnerDeletion": True}),
            "addressType": "IPv4",
            "endpoints": eps,
            "ports": [{"name": p.get("name", ""), "port": p.get("targetPort", p["port"]) if isinstance(p.get("targetPort", p["port"]), int) else p["port"],
                       "protocol": p.get("protocol", "TCP")} for p in ports]})

    # --- policy ----------------------------------------------------------
    def pdb(self, name, ns, selector, pods, min_available=None, max_unavailable=None, labels=None):
        spec = {"selector": {"matchLabels": selector}}
        n = len(pods)
        if min_available is not None:
            spec["minAvailable"] = min_available
            desired = min_available
        else:
            spec["maxUnavailable"] = max_unavailable
            mu = max_unavailable
            if isinstance(mu, str) and mu.endswith("%"):
                import math
                mu = math.ceil(n * int(mu[:-1]) / 100)
            desired = n - mu
        allowed = max(0, n - desired)
        self.items["poddisruptionbudgets.policy"].append({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": dict(self.meta("PodDisruptionBudget", name, ns, labels=labels), generation=1),
            "spec": spec,
            "status": {"observedGeneration": 1, "expectedPods": n, "currentHealthy": n,
                       "desiredHealthy": desired, "disruptionsAllowed": allowed,
                       "conditions": [{"type": "DisruptionAllowed", "status": "True" if allowed > 0 else "False",
                                       "reason": "SufficientPods" if allowed > 0 else "InsufficientPods",
                                       "message": "", "observedGeneration": 1,
                                       "lastTransitionTime": self.created}]}})

    # --- admission -------------------------------------------------------
    def webhook_config(self, kind, name, webhooks, labels=None, annotations=None):
        key = "mutatingwebhookconfigurations.admissionregistration.k8s.io" if kind == "Mutating" \
            else "validatingwebhookconfigurations.admissionregistration.k8s.io"
        self.items[key].append({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": f"{kind}WebhookConfiguration",
            "metadata": dict(self.meta(f"{kind}WebhookConfiguration", name, labels=labels, annotations=annotations),
                             generation=1),
            "webhooks": webhooks})

    # --- events ----------------------------------------------------------
    def event(self, obj, reason, message, count, first, last, component, host=None):
        md = obj["metadata"]
        ns = md.get("namespace", "default")
        name = f"{md['name']}.{hexid(16, self.name, 'ev', md['name'], reason)}"
        ev = {"apiVersion": "v1", "kind": "Event",
              "metadata": self.meta("Event", name, ns, created=first),
              "involvedObject": {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": md["name"],
                                 "namespace": ns, "uid": md["uid"], "resourceVersion": md["resourceVersion"]},
              "reason": reason, "message": message, "type": "Warning", "count": count,
              "firstTimestamp": first, "lastTimestamp": last,
              "source": {"component": component, **({"host": host} if host else {})},
              "reportingComponent": component, "reportingInstance": host or ""}
        if obj["kind"] == "Pod" and reason in ("Unhealthy",):
            ev["involvedObject"]["fieldPath"] = f"spec.containers{{{obj['spec']['containers'][0]['name']}}}"
        self.items["events"].append(ev)

    def apiservice(self, group, version, svc_ns, svc_name, port=443):
        """An aggregated APIService backed by a Service, Available. The
        built-in local APIServices (v1., v1.apps, ...) are left out: no
        check reads them. Fields no check reads (caBundle, priorities) are
        left out too."""
        name = f"{version}.{group}"
        self.items["apiservices.apiregistration.k8s.io"].append({
            "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": self.meta("APIService", name),
            "spec": {"group": group, "version": version,
                     "service": {"namespace": svc_ns, "name": svc_name, "port": port}},
            "status": {"conditions": [{"type": "Available", "status": "True", "reason": "Passed",
                                       "message": "all checks passed", "lastTransitionTime": self.created}]}})

    def storageclass(self, name, provisioner, default=False, binding="WaitForFirstConsumer", params=None):
        ann = {"storageclass.kubernetes.io/is-default-class": "true"} if default else None
        sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
              "metadata": self.meta("StorageClass", name, annotations=ann),
              "provisioner": provisioner, "reclaimPolicy": "Delete", "volumeBindingMode": binding}
        if params:
            sc["parameters"] = params
        self.items["storageclasses.storage.k8s.io"].append(sc)

    def csidriver(self, name, attach=True):
        self.items["csidrivers.storage.k8s.io"].append({
            "apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": self.meta("CSIDriver", name),
            "spec": {"attachRequired": attach}})

    def configmap(self, ns, name, data):
        """A ConfigMap kubegap reads by name (NAMED_CONFIGMAPS), with its data."""
        self.named_configmaps = getattr(self, "named_configmaps", {})
        self.named_configmaps[ns + "/" + name] = {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns, "uid": uid(self.name, "ConfigMap", ns, name), "resourceVersion": "1"},
            "data": data}

    # --- output ----------------------------------------------------------
    def write(self, outdir, api_resources, version):
        os.makedirs(outdir, exist_ok=True)
        # CoreDNS's own role, as kubeadm and the CoreDNS deployment repo
        # ship it (list and watch of endpoints, services, pods, namespaces
        # and EndpointSlices), bound to its service account: every cluster
        # that runs CoreDNS has it.
        if any(d["metadata"]["name"] == "coredns" and d["metadata"].get("namespace") == "kube-system"
               for d in self.items.get("deployments.apps", [])):
            self.items.setdefault("clusterroles.rbac.authorization.k8s.io", []).append({
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": "system:coredns", "uid": uid(self.name, "cr-coredns")},
                "rules": [
                    {"apiGroups": [""], "resources": ["endpoints", "services", "pods", "namespaces"], "verbs": ["list", "watch"]},
                    {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch"]},
                ]})
            self.items.setdefault("clusterrolebindings.rbac.authorization.k8s.io", []).append({
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                "metadata": {"name": "system:coredns", "uid": uid(self.name, "crb-coredns")},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:coredns"},
                "subjects": [{"kind": "ServiceAccount", "name": "coredns", "namespace": "kube-system"}]})
        # The kubelet registers a CSINode per node listing the CSI drivers
        # on it; the fixtures run every driver on every node and leave the
        # attach limit (allocatable.count) out, as a driver may.
        if "csinodes.storage.k8s.io" not in self.items:
            drivers = [d["metadata"]["name"] for d in self.items["csidrivers.storage.k8s.io"]]
            self.items["csinodes.storage.k8s.io"] = [{
                "apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
                "metadata": self.meta("CSINode", n["name"]),
                "spec": {"drivers": [{"name": d, "nodeID": n["name"]} for d in drivers]}} for n in self.nodes]
        for res, items in self.items.items():
            items.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
            doc = {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}
            with open(os.path.join(outdir, res + ".json"), "w") as f:
                json.dump(doc, f, indent=1, sort_keys=False)
                f.write("\n")
        # Every other resource kubegap can read is dumped too, as kubectl
        # prints an empty result, so that the dump stays complete as checks
        # come to read more. Fixtures that need objects there add them.
        for res in ALL_RECIPE_RESOURCES:
            if res not in self.items:
                doc = {"apiVersion": "v1", "items": [], "kind": "List", "metadata": {"resourceVersion": ""}}
                with open(os.path.join(outdir, res + ".json"), "w") as f:
                    json.dump(doc, f, indent=1)
                    f.write("\n")
        # Counted resources: what kubectl get --raw 'PATH?limit=1' prints.
        for res, kind in COUNTED_RESOURCES:
            path = os.path.join(outdir, res + ".count.json")
            if not os.path.exists(path):
                items = self.items.get("events", [])
                n = len(items) if res == "events.events.k8s.io" else 0
                doc = {"kind": kind, "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": []}
                if n > 0:
                    doc["items"] = [{"metadata": {"name": "first"}}]
                    if n > 1:
                        doc["metadata"]["remainingItemCount"] = n - 1
                with open(path, "w") as f:
                    json.dump(doc, f, indent=1)
                    f.write("\n")
        for nn in NAMED_CONFIGMAPS:
            path = os.path.join(outdir, "configmaps.%s.json" % nn.replace("/", "."))
            cm = getattr(self, "named_configmaps", {}).get(nn)
            if cm is not None:
                with open(path, "w") as f:
                    json.dump(cm, f, indent=1)
                    f.write("\n")
            elif not os.path.exists(path):
                open(path, "w").close()  # kubectl --ignore-not-found: none
        with open(os.path.join(outdir, "api-resources.txt"), "w") as f:
            f.write("\n".join(api_resources) + "\n")
        # kubectl get --raw /metrics: the API server's request counter and no
        # apiserver_requested_deprecated_apis series (no client has asked
        # for a deprecated version). A stand-in of the shape kube-apiserver
        # prints (families sorted by name, HELP and TYPE before each), not
        # a scrape of a real cluster of this kind.
        with open(os.path.join(outdir, "metrics.txt"), "w") as f:
            f.write(API_SERVER_METRICS)
        with open(os.path.join(outdir, "version.json"), "w") as f:
            json.dump(version, f, indent=2)
            f.write("\n")


# The families of /metrics the fixtures hold, their HELP and TYPE lines as
# kube-apiserver v1.37.2 prints them.
API_SERVER_METRICS = """# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="nodes",scope="cluster",subresource="",verb="LIST",version="v1"} 12
# HELP workqueue_depth [BETA] Current depth of workqueue
# TYPE workqueue_depth gauge
workqueue_depth{name="APIServiceRegistrationController"} 0
"""


# The recipe file names of every resource kubegap reads (kubegap recipe).
ALL_RECIPE_RESOURCES = [
    "nodes", "namespaces", "pods", "services", "events",
    "daemonsets.apps", "deployments.apps", "replicasets.apps", "statefulsets.apps",
    "poddisruptionbudgets.policy", "endpointslices.discovery.k8s.io",
    "validatingwebhookconfigurations.admissionregistration.k8s.io",
    "mutatingwebhookconfigurations.admissionregistration.k8s.io",
    "jobs.batch", "cronjobs.batch", "ingresses.networking.k8s.io", "ingressclasses.networking.k8s.io",
    "networkpolicies.networking.k8s.io", "persistentvolumes", "persistentvolumeclaims",
    "storageclasses.storage.k8s.io", "csidrivers.storage.k8s.io", "csinodes.storage.k8s.io",
    "horizontalpodautoscalers.autoscaling", "limitranges",
    "clusterroles.rbac.authorization.k8s.io", "clusterrolebindings.rbac.authorization.k8s.io",
    "roles.rbac.authorization.k8s.io", "rolebindings.rbac.authorization.k8s.io",
    "apiservices.apiregistration.k8s.io", "customresourcedefinitions.apiextensions.k8s.io",
    # Kubelet CSRs: none pending on a fresh cluster (approved ones are
    # garbage-collected within an hour of being issued).
    "certificatesigningrequests.certificates.k8s.io",
]

# Resources kubegap only counts (one LIST with limit=1), with their list kind.
COUNTED_RESOURCES = [("events.events.k8s.io", "EventList")]

# The ConfigMaps kubegap reads by name (internal/snapshot NamedConfigMaps).
NAMED_CONFIGMAPS = [
    "kube-system/kube-root-ca.crt", "kube-system/kube-proxy", "kube-system/kube-proxy-config", "kube-system/coredns",
    "kube-flannel/kube-flannel-cfg", "kube-system/kube-flannel-cfg", "kube-system/canal-config",
    "istio-system/istio-ca-root-cert", "linkerd/linkerd-identity-trust-roots", "dapr-system/dapr-trust-bundle",
    "ingress-nginx/ingress-nginx-controller",
    "kube-system/descheduler", "kube-system/descheduler-policy-configmap",
    "kube-system/cluster-autoscaler-status",
    "argocd/argocd-cmd-params-cm",
]
# Memory each provider holds back from allocatable: kube-reserved (and
# system-reserved) plus the kubelet's hard eviction threshold, in KiB.
EVICTION_KI = 100 * 1024  # memory.available<100Mi, the kubelet default and each provider's


def aks_reserved_ki(cap_ki, max_pods):
    """AKS 1.29 and later: the smaller of 20 MB per pod plus 50 MB, and 25% of
    memory, plus the 100Mi eviction rule
    (https://learn.microsoft.com/en-us/azure/aks/node-resource-reservations)."""
    mb = 1000 * 1000 // 1024  # a megabyte in KiB
    return min(20 * mb * max_pods + 50 * mb, cap_ki // 4) + EVICTION_KI


def eks_reserved_ki(cap_ki, max_pods):
    """EKS AMIs: 11 MiB per pod plus 255 MiB, plus the 100Mi eviction rule
    (https://github.com/awslabs/amazon-eks-ami, bootstrap's kube-reserved)."""
    return (11 * max_pods + 255) * 1024 + EVICTION_KI


def gke_reserved_ki(cap_ki, max_pods):
    """GKE: 25% of the first 4 GiB, 20% of the next 4, 10% of the next 8, 6% of
    the next 112 and 2% above 128 GiB, plus 100 MiB for eviction
    (https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes)."""
    gi = 1024 * 1024
    tiers = [(4 * gi, 0.25), (4 * gi, 0.20), (8 * gi, 0.10), (112 * gi, 0.06), (float("inf"), 0.02)]
    left, total = cap_ki, 0
    for size, rate in tiers:
        part = min(left, size)
        total += part * rate
        left -= part
        if left <= 0:
            break
    return int(total) + EVICTION_KI


def eviction_only_ki(cap_ki, max_pods):
    """A kubelet with no kube- or system-reserved: only the default hard
    eviction threshold (memory.available<100Mi) is held back."""
    return EVICTION_KI


def normalize_image(image):
    """The image as the kubelet reports it: with docker.io/ (and library/) made explicit."""
    first = image.split("/")[0]
    if "/" in image and ("." in first or ":" in first or first == "localhost"):
        return image
    if "/" not in image:
        return "docker.io/library/" + image
    return "docker.io/" + image


def repo_for_id(image):
    ref = image.split("@")[0]
    last = ref.rsplit("/", 1)
    if ":" in last[-1]:
        ref = ref.rsplit(":", 1)[0]
    return ref


def version_doc(git_version, git_commit, build_date, go_version, platform="linux/amd64"):
    major, minor = git_version.lstrip("v").split(".")[:2]
    return {"clientVersion": {"major": "1", "minor": "36", "gitVersion": "v1.36.1",
                              "gitCommit": hexid(40, "client"), "gitTreeState": "clean",
                              "buildDate": "2026-05-20T10:00:00Z", "goVersion": "go1.26.2",
                              "compiler": "gc", "platform": "linux/amd64"},
            "kustomizeVersion": "v5.7.1",
            "serverVersion": {"major": major, "minor": minor, "gitVersion": git_version,
                              "gitCommit": git_commit, "gitTreeState": "clean", "buildDate": build_date,
                              "goVersion": go_version, "compiler": "gc", "platform": platform}}


# What `kubectl api-resources -o name` prints on a plain v1.3x API server
# (no CRDs). Providers add their CRDs on top.
BUILTIN_API_RESOURCES = """bindings
componentstatuses
configmaps
endpoints
events
limitranges
namespaces
nodes
persistentvolumeclaims
persistentvolumes
pods
podtemplates
replicationcontrollers
resourcequotas
secrets
serviceaccounts
services
mutatingwebhookconfigurations.admissionregistration.k8s.io
validatingadmissionpolicies.admissionregistration.k8s.io
validatingadmissionpolicybindings.admissionregistration.k8s.io
validatingwebhookconfigurations.admissionregistration.k8s.io
customresourcedefinitions.apiextensions.k8s.io
apiservices.apiregistration.k8s.io
controllerrevisions.apps
daemonsets.apps
deployments.apps
replicasets.apps
statefulsets.apps
selfsubjectreviews.authentication.k8s.io
tokenreviews.authentication.k8s.io
localsubjectaccessreviews.authorization.k8s.io
selfsubjectaccessreviews.authorization.k8s.io
selfsubjectrulesreviews.authorization.k8s.io
subjectaccessreviews.authorization.k8s.io
horizontalpodautoscalers.autoscaling
cronjobs.batch
jobs.batch
certificatesigningrequests.certificates.k8s.io
leases.coordination.k8s.io
endpointslices.discovery.k8s.io
events.events.k8s.io
flowschemas.flowcontrol.apiserver.k8s.io
prioritylevelconfigurations.flowcontrol.apiserver.k8s.io
ingressclasses.networking.k8s.io
ingresses.networking.k8s.io
ipaddresses.networking.k8s.io
networkpolicies.networking.k8s.io
servicecidrs.networking.k8s.io
runtimeclasses.node.k8s.io
poddisruptionbudgets.policy
clusterrolebindings.rbac.authorization.k8s.io
clusterroles.rbac.authorization.k8s.io
rolebindings.rbac.authorization.k8s.io
roles.rbac.authorization.k8s.io
deviceclasses.resource.k8s.io
resourceclaims.resource.k8s.io
resourceclaimtemplates.resource.k8s.io
resourceslices.resource.k8s.io
priorityclasses.scheduling.k8s.io
csidrivers.storage.k8s.io
csinodes.storage.k8s.io
csistoragecapacities.storage.k8s.io
storageclasses.storage.k8s.io
volumeattachments.storage.k8s.io""".split("\n")
