import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *

c = Cluster("k3s", "2026-11-26T19:40:00Z")
c.pod_cidr = "10.42.0"
for ns in ("default", "kube-node-lease", "kube-public", "kube-system"):
    c.namespace(ns)

# k3s v1.35.8+k3s1 (its release notes: containerd v2.2.7-k3s1, CoreDNS
# v1.14.6, Metrics-server v0.9.0, Traefik v3.7.8, Local-path-provisioner
# v0.0.37) on Ubuntu: one server, two agents. The k3s cloud provider sets
# providerID k3s://<node> and instance type "k3s"; no zones, no taints.
VER = "v1.35.8+k3s1"
nodes = []
for name, ip, server in (("k3s-server-1", "192.168.1.21", True), ("k3s-agent-1", "192.168.1.22", False),
                         ("k3s-agent-2", "192.168.1.23", False)):
    labels = {"node.kubernetes.io/instance-type": "k3s", "beta.kubernetes.io/instance-type": "k3s"}
    if server:
        labels.update({"node-role.kubernetes.io/control-plane": "true", "node-role.kubernetes.io/master": "true"})
    # Assumed, not checked at a source: k3s passes no kube-reserved or
    # system-reserved, so only the default eviction threshold is held back.
    c.node(name, labels, f"k3s://{name}",
           {"osImage": "Ubuntu 24.04.3 LTS", "kernelVersion": "6.8.0-88-generic",
            "containerRuntimeVersion": "containerd://2.2.7-k3s1", "kubeletVersion": VER},
           ip, capacity={"cpu": "4", "memory": "8131360Ki", "pods": "110", "ephemeral-storage": "61611820Ki"}, reserved_memory_ki=eviction_only_ki)
    nodes.append(c.nodes[-1])

K3S_TOL = [{"key": "CriticalAddonsOnly", "operator": "Exists"},
           {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"},
           {"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"}]


def addon(name):
    """What k3s's deploy controller leaves on an object of a packaged
    manifest: wrangler's objectset owner annotations naming the Addon (the
    file's base name) that applied it, as a k3s StorageClass dump shows
    (objectset.rio.cattle.io/owner-gvk "k3s.cattle.io/v1, Kind=Addon")."""
    return {"objectset.rio.cattle.io/owner-gvk": "k3s.cattle.io/v1, Kind=Addon",
            "objectset.rio.cattle.io/owner-name": name,
            "objectset.rio.cattle.io/owner-namespace": "kube-system"}



dns = {"metadata": {"labels": {"k8s-app": "kube-dns"}},
       "spec": {"priorityClassName": "system-cluster-critical", "serviceAccountName": "coredns", "dnsPolicy": "Default",
                "nodeSelector": {"kubernetes.io/os": "linux"}, "tolerations": K3S_TOL,
                "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                               "whenUnsatisfiable": "DoNotSchedule",
                                               "labelSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
                "containers": [ctr("coredns", "rancher/mirrored-coredns-coredns:1.14.6", args=["-conf", "/etc/coredns/Corefile"],
                                   ports=[{"containerPort": 53, "name": "dns", "protocol": "UDP"},
                                          {"containerPort": 53, "name": "dns-tcp", "protocol": "TCP"},
                                          {"containerPort": 9153, "name": "metrics", "protocol": "TCP"}],
                                   resources={"limits": {"memory": "170Mi"}, "requests": {"cpu": "100m", "memory": "70Mi"}},
                                   livenessProbe={"httpGet": {"path": "/health", "port": 8080, "scheme": "HTTP"}, "initialDelaySeconds": 60},
                                   readinessProbe={"httpGet": {"path": "/ready", "port": 8181, "scheme": "HTTP"}, "periodSeconds": 2},
                                   securityContext={"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                                                    "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["all"]}},
                                   volumeMounts=[{"name": "config-volume", "mountPath": "/etc/coredns", "readOnly": True},
                                                 {"name": "custom-config-volume", "mountPath": "/etc/coredns/custom", "readOnly": True}])],
                "volumes": [{"name": "config-volume", "configMap": {"name": "coredns", "defaultMode": 420,
                                                                     "items": [{"key": "Corefile", "path": "Corefile"},
                                                                               {"key": "NodeHosts", "path": "NodeHosts"}]}},
                            {"name": "custom-config-volume", "configMap": {"name": "coredns-custom", "optional": True, "defaultMode": 420}}]}}
_, dns_pods = c.deployment("coredns", "kube-system", {"k8s-app": "kube-dns", "kubernetes.io/name": "CoreDNS"}, dns, 1, nodes,
                           strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "25%"}},
                           annotations=addon("coredns"))
lpp = {"metadata": {"labels": {"app": "local-path-provisioner"}},
       "spec": {"priorityClassName": "system-node-critical", "serviceAccountName": "local-path-provisioner-service-account",
                "tolerations": K3S_TOL,
                "containers": [ctr("local-path-provisioner", "rancher/local-path-provisioner:v0.0.37",
                                   command=["local-path-provisioner", "start", "--config", "/etc/config/config.json"],
                                   env=[{"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}}],
                                   volumeMounts=[{"name": "config-volume", "mountPath": "/etc/config/"}])],
                "volumes": [{"name": "config-volume", "configMap": {"name": "local-path-config", "defaultMode": 420}}]}}
c.deployment("local-path-provisioner", "kube-system", {"app": "local-path-provisioner"}, lpp, 1, nodes,
             strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "25%"}}, annotations=addon("local-storage"))
ms = {"metadata": {"labels": {"k8s-app": "metrics-server"}, "name": "metrics-server"},
      "spec": {"priorityClassName": "system-node-critical", "serviceAccountName": "metrics-server", "tolerations": K3S_TOL,
               "containers": [ctr("metrics-server", "rancher/mirrored-metrics-server:v0.9.0",
                                  args=["--cert-dir=/tmp", "--secure-port=10250",
                                        "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
                                        "--kubelet-use-node-status-port", "--metric-resolution=15s", "--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"],
                                  ports=[{"containerPort": 10250, "name": "https", "protocol": "TCP"}],
                                  readinessProbe={"httpGet": {"path": "/readyz", "port": "https", "scheme": "HTTPS"}, "periodSeconds": 2},
                                  securityContext={"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                                                   "runAsNonRoot": True, "runAsUser": 1000},
                                  volumeMounts=[{"name": "tmp-dir", "mountPath": "/tmp"}])],
               "volumes": [{"name": "tmp-dir", "emptyDir": {}}]}}
_, ms_pods = c.deployment("metrics-server", "kube-system", {"k8s-app": "metrics-server"}, ms, 1, nodes[1:], annotations=addon("metrics-server-deployment"))

# Traefik, installed by the helm-controller from the packaged chart.
tr_labels = {"app.kubernetes.io/instance": "traefik-kube-system", "app.kubernetes.io/managed-by": "Helm",
             "app.kubernetes.io/name": "traefik", "helm.sh/chart": "traefik-40.0.201_up40.0.2"}
tr = {"metadata": {"labels": {"app.kubernetes.io/instance": "traefik-kube-system", "app.kubernetes.io/managed-by": "Helm",
                              "app.kubernetes.io/name": "traefik", "helm.sh/chart": "traefik-40.0.201_up40.0.2"},
                   "annotations": {"prometheus.io/path": "/metrics", "prometheus.io/port": "8082", "prometheus.io/scrape": "true"}},
      "spec": {"priorityClassName": "system-cluster-critical", "serviceAccountName": "traefik", "tolerations": K3S_TOL,
               "terminationGracePeriodSeconds": 60,
               "securityContext": {"runAsGroup": 65532, "runAsNonRoot": True, "runAsUser": 65532},
               "containers": [ctr("traefik", "rancher/mirrored-library-traefik:3.7.8",
                                  args=["--entryPoints.metrics.address=:8080/tcp", "--entryPoints.traefik.address=:8080/tcp",
                                        "--entryPoints.web.address=:8000/tcp", "--entryPoints.websecure.address=:8443/tcp",
                                        "--api.dashboard=true", "--ping=true", "--metrics.prometheus=true",
                                        "--providers.kubernetescrd", "--providers.kubernetesingress",
                                        "--providers.kubernetesingress.ingressendpoint.publishedservice=kube-system/traefik",
                                        "--entryPoints.websecure.http.tls=true", "--log.level=INFO"],
                                  ports=[{"containerPort": 8080, "name": "metrics", "protocol": "TCP"},
                                         {"containerPort": 8000, "name": "web", "protocol": "TCP"},
                                         {"containerPort": 8443, "name": "websecure", "protocol": "TCP"}],
                                  livenessProbe={"httpGet": {"path": "/ping", "port": 8080, "scheme": "HTTP"}, "initialDelaySeconds": 2},
                                  readinessProbe={"httpGet": {"path": "/ping", "port": 8080, "scheme": "HTTP"}, "initialDelaySeconds": 2},
                                  securityContext={"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                                                   "readOnlyRootFilesystem": True},
                                  volumeMounts=[{"name": "data", "mountPath": "/data"}, {"name": "tmp", "mountPath": "/tmp"}])],
               "volumes": [{"name": "data", "emptyDir": {}}, {"name": "tmp", "emptyDir": {}}]}}
_, tr_pods = c.deployment("traefik", "kube-system", tr_labels, tr, 1, nodes[2:],
                          selector={"app.kubernetes.io/instance": "traefik-kube-system", "app.kubernetes.io/name": "traefik"},
                          annotations={"meta.helm.sh/release-name": "traefik", "meta.helm.sh/release-namespace": "kube-system"},
                          strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}})

# ServiceLB (klipper-lb): a DaemonSet per LoadBalancer Service, named
# svclb-<service>-<first 8 of its UID>, one lb-<proto>-<port> container
# per port, host ports, NET_ADMIN.
svc_uid = uid("k3s", "Service", "kube-system", "traefik")
svclb_name = f"svclb-traefik-{svc_uid[:8]}"
svclb_labels = {"app": svclb_name, "svccontroller.k3s.cattle.io/svcname": "traefik",
                "svccontroller.k3s.cattle.io/svcnamespace": "kube-system"}
ports = (("web", 80, 31080), ("websecure", 443, 31443))
svclb = {"metadata": {"labels": svclb_labels},
         "spec": {"serviceAccountName": "svclb", "automountServiceAccountToken": False, "priorityClassName": "system-node-critical",
                  "securityContext": {"sysctls": [{"name": "net.ipv4.ip_forward", "value": "1"}]},
                  "tolerations": [{"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"},
                                  {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"},
                                  {"key": "CriticalAddonsOnly", "operator": "Exists"}],
                  "containers": [ctr(f"lb-tcp-{p}", "rancher/klipper-lb:v0.4.17",
                                     env=[{"name": "SRC_PORT", "value": str(p)}, {"name": "SRC_RANGES", "value": "0.0.0.0/0"},
                                          {"name": "DEST_PROTO", "value": "TCP"}, {"name": "DEST_PORT", "value": str(np)},
                                          {"name": "DEST_IPS", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.hostIPs"}}}],
                                     ports=[{"containerPort": p, "hostPort": p, "name": f"lb-tcp-{p}", "protocol": "TCP"}],
                                     resources={}, securityContext={"capabilities": {"add": ["NET_ADMIN"]}})
                                 for _, p, np in ports]}}
c.daemonset(svclb_name, "kube-system", dict(svclb_labels, **{"objectset.rio.cattle.io/owner-gvk": "/v1, Kind=Service",
                                                             "objectset.rio.cattle.io/owner-name": "traefik",
                                                             "objectset.rio.cattle.io/owner-namespace": "kube-system"}),
            svclb, nodes)

c.service("kube-dns", "kube-system", {"k8s-app": "kube-dns"},
          [{"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
           {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
           {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153}],
          "10.43.0.10", labels={"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS"},
          annotations=dict(addon("coredns"), **{"prometheus.io/port": "9153", "prometheus.io/scrape": "true"}), pods=dns_pods)
c.service("metrics-server", "kube-system", {"k8s-app": "metrics-server"},
          [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": "https"}],
          "10.43.171.9", labels={"kubernetes.io/cluster-service": "true", "kubernetes.io/name": "Metrics-server"},
          annotations=addon("metrics-server-service"), pods=ms_pods)
c.service("traefik", "kube-system", {"app.kubernetes.io/instance": "traefik-kube-system", "app.kubernetes.io/name": "traefik"},
          [{"name": "web", "port": 80, "protocol": "TCP", "targetPort": "web", "nodePort": 31080},
           {"name": "websecure", "port": 443, "protocol": "TCP", "targetPort": "websecure", "nodePort": 31443}],
          "10.43.88.120", labels=tr_labels, annotations={"meta.helm.sh/release-name": "traefik",
                                                         "meta.helm.sh/release-namespace": "kube-system"},
          svc_type="LoadBalancer", pods=tr_pods, lb_ingress=[n["ip"] for n in nodes])

# The helm-controller's install Jobs leave Completed pods behind.
for chart in ("traefik-crd", "traefik"):
    job = f"helm-install-{chart}"
    tmpl = {"metadata": {"labels": {"batch.kubernetes.io/job-name": job, "helmcharts.helm.cattle.io/chart": chart,
                                    "job-name": job}},
            "spec": {"restartPolicy": "OnFailure", "serviceAccountName": f"helm-{chart}",
                     "tolerations": K3S_TOL,
                     "containers": [ctr("helm", "rancher/klipper-helm:v0.9.14-build20260721",
                                        args=["install", "--set-string", "global.systemDefaultRegistry="],
                                        env=[{"name": "NAME", "value": chart}, {"name": "TARGET_NAMESPACE", "value": "kube-system"}])]}}
    c.items["jobs.batch"].append({"apiVersion": "batch/v1", "kind": "Job",
                                  "metadata": c.meta("Job", job, "kube-system", labels={"helmcharts.helm.cattle.io/chart": chart}),
                                  "spec": {"template": tmpl},
                                  "status": {"succeeded": 1}})
    c.pod(f"{job}-{podsuffix(5, 'k3s', job)}", "kube-system", tmpl, nodes[0], phase="Succeeded",
          owner={"apiVersion": "batch/v1", "kind": "Job", "name": job, "uid": uid("k3s", "Job", "kube-system", job),
                 "controller": True, "blockOwnerDeletion": True})

# On first start the traefik install job may run before its CRDs are
# established and retry once: a back-off Warning on a pod that then
# completed.
c.event(c.items["pods"][-1], "BackOff", "Back-off restarting failed container helm in pod "
        f"{c.items['pods'][-1]['metadata']['name']}_kube-system({c.items['pods'][-1]['metadata']['uid']})", 1,
        "2026-11-26T19:41:05Z", "2026-11-26T19:41:05Z", "kubelet", nodes[0]["name"])

# The bundled Traefik chart creates its IngressClass (controller
# traefik.io/ingress-controller, traefik chart templates/ingressclass.yaml).
# Its default-class annotation follows a chart value not checked here, so
# it is left out.
c.items["ingressclasses.networking.k8s.io"].append({
    "apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
    "metadata": c.meta("IngressClass", "traefik", labels=tr_labels,
                       annotations={"meta.helm.sh/release-name": "traefik", "meta.helm.sh/release-namespace": "kube-system"}),
    "spec": {"controller": "traefik.io/ingress-controller"}})

api = BUILTIN_API_RESOURCES + """addons.k3s.cattle.io
etcdsnapshotfiles.k3s.cattle.io
helmchartconfigs.helm.cattle.io
helmcharts.helm.cattle.io
ingressroutes.traefik.io
ingressroutetcps.traefik.io
ingressrouteudps.traefik.io
middlewares.traefik.io
middlewaretcps.traefik.io
serverstransports.traefik.io
serverstransporttcps.traefik.io
tlsoptions.traefik.io
tlsstores.traefik.io
traefikservices.traefik.io
nodes.metrics.k8s.io
pods.metrics.k8s.io""".split("\n")
# metrics-server registers the resource metrics API.
c.apiservice("metrics.k8s.io", "v1beta1", "kube-system", "metrics-server")

# The bundled local-path provisioner's class.
c.storageclass("local-path", "rancher.io/local-path", default=True)

c.write(sys.argv[1], api, version_doc(VER, hexid(40, "k3s", "commit"), "2026-08-27T20:00:00Z", "go1.26.7"))
