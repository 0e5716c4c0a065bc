import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *


c = Cluster("aks", "2026-11-24T09:12:00Z")
c.pod_cidr = "10.244.1"
SUB = "8f3c2b1a-4d5e-4f60-9a7b-0c1d2e3f4a5b"
MC = "MC_rg-prod_aks-prod_eastus2"
MANAGED = {"addonmanager.kubernetes.io/mode": "Reconcile", "kubernetes.azure.com/managedby": "aks"}

for ns in ("default", "kube-node-lease", "kube-public"):
    c.namespace(ns)
# The AKS admissions enforcer's selector keys on these two labels
# (DataDog/datadog-agent#55778): kube-system carries them.
c.namespace("kube-system", {"control-plane": "true", "kubernetes.azure.com/managedby": "aks"})

pools = [
    ("systempool", "system", "Ubuntu", "AKSUbuntu-2204gen2containerd-202607.09.0", "Standard_D4ds_v5",
     {"osImage": "Ubuntu 22.04.5 LTS", "kernelVersion": "5.15.0-1116-azure",
      "containerRuntimeVersion": "containerd://1.7.33-1", "kubeletVersion": "v1.34.7"},
     [{"key": "CriticalAddonsOnly", "value": "true", "effect": "NoSchedule"}], "10.224.0"),
    ("userpool", "user", "AzureLinux", "AKSAzureLinux-V3gen2-202607.09.0", "Standard_D8ds_v5",
     {"osImage": "Microsoft Azure Linux 3.0", "kernelVersion": "6.6.143.1-1.azl3",
      "containerRuntimeVersion": "containerd://2.2.4", "kubeletVersion": "v1.34.7"},
     None, "10.224.0"),
]
system, user = [], []
ipn = 4
for pool, mode, sku, image, size, info, taints, net in pools:
    vmss = f"aks-{pool}-31415926-vmss"
    for i in range(3 if mode == "system" else 2):
        name = f"{vmss}00000{i}"
        labels = {
            "agentpool": pool, "kubernetes.azure.com/agentpool": pool,
            "kubernetes.azure.com/mode": mode, "kubernetes.azure.com/os-sku": sku,
            "kubernetes.azure.com/node-image-version": image, "kubernetes.azure.com/cluster": MC,
            "kubernetes.azure.com/role": "agent", "kubernetes.azure.com/kubelet-identity-client-id": uid("aks", "kubelet-id"),
            "kubernetes.azure.com/network-plugin": "azure", "kubernetes.azure.com/azure-cni-overlay": "true",
            "kubernetes.azure.com/consolidated-additional-properties": uid("aks", "props", pool),
            "node.kubernetes.io/instance-type": size, "beta.kubernetes.io/instance-type": size,
            "topology.kubernetes.io/region": "eastus2", "failure-domain.beta.kubernetes.io/region": "eastus2",
            "topology.kubernetes.io/zone": f"eastus2-{i + 1}", "failure-domain.beta.kubernetes.io/zone": f"eastus2-{i + 1}",
            "topology.disk.csi.azure.com/zone": f"eastus2-{i + 1}",
            "storageprofile": "managed", "storagetier": "Premium_LRS",
        }
        if mode == "system":
            labels["kubernetes.azure.com/mode"] = "system"
        pid = (f"azure:///subscriptions/{SUB}/resourceGroups/mc_rg-prod_aks-prod_eastus2/providers/"
               f"Microsoft.Compute/virtualMachineScaleSets/{vmss}/virtualMachines/{i}")
        ipn += 1
        c.node(name, labels, pid, info, f"{net}.{ipn}", taints=taints,
               capacity={"cpu": "4" if mode == "system" else "8", "memory": "16365096Ki" if mode == "system" else "32882536Ki",
                         "pods": "250", "ephemeral-storage": "129886128Ki"}, reserved_memory_ki=aks_reserved_ki)
        (system if mode == "system" else user).append(c.nodes[-1])
allnodes = system + user

CAO = {"key": "CriticalAddonsOnly", "operator": "Exists"}
LINUX_AFF = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
                          {"key": "kubernetes.azure.com/cluster", "operator": "Exists"}]}]}}}
SYS_PREF = {"nodeAffinity": {
    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.azure.com/cluster", "operator": "Exists"},
                              {"key": "type", "operator": "NotIn", "values": ["virtual-kubelet"]},
                              {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}]},
    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "preference": {"matchExpressions": [
        {"key": "kubernetes.azure.com/mode", "operator": "In", "values": ["system"]}]}}]}}
ALL_TOL = [CAO, {"operator": "Exists", "effect": "NoExecute"}, {"operator": "Exists", "effect": "NoSchedule"}]

# --- DaemonSets ------------------------------------------------------------
# azure-cns with the cni-installer init container, as in the founding
# incident's healthy variant: the original (static) azure-cni path.
cns_tmpl = {"metadata": {"labels": {"k8s-app": "azure-cns"}, "annotations": {"cluster-autoscaler.kubernetes.io/daemonset-pod": "true"}},
            "spec": {"hostNetwork": True, "dnsPolicy": "ClusterFirstWithHostNet", "priorityClassName": "system-node-critical",
                     "serviceAccountName": "azure-cns", "affinity": LINUX_AFF, "tolerations": ALL_TOL,
                     "initContainers": [ctr("cni-installer", "mcr.microsoft.com/containernetworking/azure-cni:v1.7.16-0",
                                            command=["/dropgz"],
                                            args=["deploy", "--skip-verify", "azure-vnet", "-o", "/opt/cni/bin/azure-vnet",
                                                  "azure-vnet-telemetry", "-o", "/opt/cni/bin/azure-vnet-telemetry"],
                                            volumeMounts=[{"name": "cni-bin", "mountPath": "/opt/cni/bin"}])],
                     "containers": [ctr("cns-container", "mcr.microsoft.com/containernetworking/azure-cns:v1.7.16-0",
                                        args=["-c", "tcp://$(CNSIpAddress):$(CNSPort)", "-t", "$(CNSLogTarget)",
                                              "-o", "$(CNSLogDir)", "--config-path", "/etc/azure-cns/cns_config.json"],
                                        env=[{"name": "CNSIpAddress", "value": "127.0.0.1"}, {"name": "CNSPort", "value": "10090"},
                                             {"name": "CNSLogTarget", "value": "stdoutfile"}, {"name": "CNSLogDir", "value": "/var/log"}],
                                        ports=[{"containerPort": 10090, "hostPort": 10090, "name": "api", "protocol": "TCP"}],
                                        securityContext={"capabilities": {"add": ["NET_ADMIN"]}},
                                        volumeMounts=[{"name": "log", "mountPath": "/var/log"},
                                                      {"name": "cns-state", "mountPath": "/var/lib/azure-network"},
                                                      {"name": "cni-conflist", "mountPath": "/etc/cni/net.d"},
                                                      {"name": "azure-vnet", "mountPath": "/var/run/azure-vnet"}])],
                     "volumes": [hp("log", "/var/log", "Directory"), hp("cns-state", "/var/lib/azure-network", "DirectoryOrCreate"),
                                 hp("cni-bin", "/opt/cni/bin", "Directory"), hp("cni-conflist", "/etc/cni/net.d", "Directory"),
                                 hp("azure-vnet", "/var/run/azure-vnet", "DirectoryOrCreate")]}}
c.daemonset("azure-cns", "kube-system", dict(MANAGED, **{"k8s-app": "azure-cns"}), cns_tmpl, allnodes, host_network=True)

masq_tmpl = {"metadata": {"labels": {"k8s-app": "azure-ip-masq-agent", "tier": "node"}},
             "spec": {"hostNetwork": True, "priorityClassName": "system-node-critical", "affinity": LINUX_AFF,
                      "tolerations": ALL_TOL,
                      "containers": [ctr("azure-ip-masq-agent", "mcr.microsoft.com/oss/v2/azure/ip-masq-agent-v2:v0.1.16-10",
                                         args=["--v=2", "--resync-interval=60"],
                                         securityContext={"privileged": False, "capabilities": {"add": ["NET_ADMIN", "NET_RAW"]}},
                                         volumeMounts=[{"name": "azure-ip-masq-agent-config-volume", "mountPath": "/etc/config"}])],
                      "volumes": [{"name": "azure-ip-masq-agent-config-volume", "projected": {"defaultMode": 420, "sources": [
                          {"configMap": {"name": "azure-ip-masq-agent-config-reconciled", "optional": True,
                                         "items": [{"key": "ip-masq-agent-reconciled", "path": "ip-masq-agent-reconciled"}]}}]}}]}}
c.daemonset("azure-ip-masq-agent", "kube-system", dict(MANAGED, **{"k8s-app": "azure-ip-masq-agent"}), masq_tmpl, allnodes, host_network=True)

cnm_tmpl = {"metadata": {"labels": {"k8s-app": "cloud-node-manager"}},
            "spec": {"hostNetwork": True, "priorityClassName": "system-node-critical", "serviceAccountName": "cloud-node-manager",
                     "affinity": LINUX_AFF, "tolerations": ALL_TOL,
                     "containers": [ctr("cloud-node-manager", "mcr.microsoft.com/oss/v2/kubernetes/azure-cloud-node-manager:v1.34.11-3",
                                        command=["cloud-node-manager", "--node-name=$(NODE_NAME)", "--wait-routes=false"],
                                        env=[{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}}])]}}
c.daemonset("cloud-node-manager", "kube-system", dict(MANAGED, **{"k8s-app": "cloud-node-manager"}), cnm_tmpl, allnodes, host_network=True)


def csi_node(name, driver_image, kubelet_dir_mounts):
    return {"metadata": {"labels": {"app": name}},
            "spec": {"hostNetwork": True, "dnsPolicy": "Default", "priorityClassName": "system-node-critical",
                     "serviceAccountName": name.replace("-node", "-node-sa"), "affinity": LINUX_AFF, "tolerations": ALL_TOL,
                     "containers": [
                         ctr("liveness-probe", "mcr.microsoft.com/oss/v2/kubernetes-csi/livenessprobe:v2.18.0",
                             args=["--csi-address=/csi/csi.sock", "--probe-timeout=3s", "--health-port=29603"],
                             volumeMounts=[{"name": "socket-dir", "mountPath": "/csi"}]),
                         ctr("node-driver-registrar", "mcr.microsoft.com/oss/v2/kubernetes-csi/csi-node-driver-registrar:v2.16.0",
                             args=["--csi-address=$(ADDRESS)", "--kubelet-registration-path=$(DRIVER_REG_SOCK_PATH)", "--v=2"],
                             env=[{"name": "ADDRESS", "value": "/csi/csi.sock"},
                                  {"name": "DRIVER_REG_SOCK_PATH", "value": f"/var/lib/kubelet/plugins/{kubelet_dir_mounts}/csi.sock"}],
                             volumeMounts=[{"name": "socket-dir", "mountPath": "/csi"}, {"name": "registration-dir", "mountPath": "/registration"}]),
                         ctr(name.split("-")[1], driver_image,
                             args=["--v=5", "--endpoint=$(CSI_ENDPOINT)", "--nodeid=$(KUBE_NODE_NAME)"],
                             env=[{"name": "CSI_ENDPOINT", "value": "unix:///csi/csi.sock"},
                                  {"name": "KUBE_NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}}],
                             securityContext={"privileged": True},
                             volumeMounts=[{"name": "socket-dir", "mountPath": "/csi"},
                                           {"name": "mountpoint-dir", "mountPath": "/var/lib/kubelet", "mountPropagation": "Bidirectional"},
                                           {"name": "device-dir", "mountPath": "/dev"}])],
                     "volumes": [hp("socket-dir", f"/var/lib/kubelet/plugins/{kubelet_dir_mounts}", "DirectoryOrCreate"),
                                 hp("mountpoint-dir", "/var/lib/kubelet", "DirectoryOrCreate"),
                                 hp("registration-dir", "/var/lib/kubelet/plugins_registry", "DirectoryOrCreate"),
                                 hp("device-dir", "/dev", "Directory")]}}


c.daemonset("csi-azuredisk-node", "kube-system", dict(MANAGED, **{"app": "csi-azuredisk-node"}),
            csi_node("csi-azuredisk-node", "mcr.microsoft.com/oss/v2/kubernetes-csi/azuredisk-csi:v1.34.4", "disk.csi.azure.com"),
            allnodes, host_network=True)
c.daemonset("csi-azurefile-node", "kube-system", dict(MANAGED, **{"app": "csi-azurefile-node"}),
            csi_node("csi-azurefile-node", "mcr.microsoft.com/oss/v2/kubernetes-csi/azurefile-csi:v1.34.6", "file.csi.azure.com"),
            allnodes, host_network=True)

kp_tmpl = {"metadata": {"labels": {"component": "kube-proxy", "tier": "node"}},
           "spec": {"hostNetwork": True, "priorityClassName": "system-node-critical", "affinity": LINUX_AFF,
                    "tolerations": ALL_TOL,
                    "containers": [ctr("kube-proxy", "mcr.microsoft.com/oss/v2/kubernetes/kube-proxy:v1.34.7-2",
                                       command=["kube-proxy", "--conntrack-max-per-core=0", "--metrics-bind-address=0.0.0.0:10249",
                                                "--cluster-cidr=10.244.0.0/16", "--detect-local-mode=ClusterCIDR",
                                                "--pod-interface-name-prefix=", "--v=3"],
                                       securityContext={"privileged": True},
                                       volumeMounts=[{"name": "kubeconfig", "mountPath": "/var/lib/kubelet", "readOnly": True},
                                                     {"name": "certificates", "mountPath": "/etc/kubernetes/certs", "readOnly": True},
                                                     {"name": "iptableslock", "mountPath": "/run/xtables.lock"},
                                                     {"name": "kernel-modules", "mountPath": "/lib/modules", "readOnly": True}])],
                    "volumes": [hp("kubeconfig", "/var/lib/kubelet"), hp("certificates", "/etc/kubernetes/certs"),
                                hp("iptableslock", "/run/xtables.lock", "FileOrCreate"), hp("kernel-modules", "/lib/modules")]}}
c.daemonset("kube-proxy", "kube-system", dict(MANAGED, **{"component": "kube-proxy", "tier": "node"}), kp_tmpl, allnodes,
            host_network=True, update={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%", "maxSurge": 0}})

# --- Deployments -------------------------------------------------------------
SPREAD = lambda sel: [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
                       "labelSelector": {"matchLabels": sel}},
                      {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
                       "labelSelector": {"matchLabels": sel}}]
dns_tmpl = {"metadata": {"labels": {"k8s-app": "kube-dns", "kubernetes.azure.com/managedby": "aks", "version": "v20"}},
            "spec": {"priorityClassName": "system-node-critical", "serviceAccountName": "coredns", "dnsPolicy": "Default",
                     "affinity": SYS_PREF, "tolerations": [CAO], "topologySpreadConstraints": SPREAD({"k8s-app": "kube-dns"}),
                     "containers": [ctr("coredns", "mcr.microsoft.com/oss/v2/kubernetes/coredns:v1.12.1-14",
                                        args=["-conf", "/etc/coredns/Corefile"],
                                        ports=[{"containerPort": 53, "name": "dns", "protocol": "UDP"},
                                               {"containerPort": 53, "name": "dns-tcp", "protocol": "TCP"},
                                               {"containerPort": 9153, "name": "metrics", "protocol": "TCP"}],
                                        resources={"limits": {"memory": "500Mi"}, "requests": {"cpu": "100m", "memory": "70Mi"}},
                                        livenessProbe={"httpGet": {"path": "/health", "port": 8080, "scheme": "HTTP"},
                                                       "initialDelaySeconds": 60, "timeoutSeconds": 5},
                                        readinessProbe={"httpGet": {"path": "/ready", "port": 8181, "scheme": "HTTP"}},
                                        securityContext={"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                                                         "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["all"]}},
                                        volumeMounts=[{"name": "config-volume", "mountPath": "/etc/coredns", "readOnly": True},
                                                      {"name": "custom-config-volume", "mountPath": "/etc/coredns/custom", "readOnly": True}])],
                     "volumes": [{"name": "config-volume", "configMap": {"name": "coredns", "defaultMode": 420,
                                                                          "items": [{"key": "Corefile", "path": "Corefile"}]}},
                                 {"name": "custom-config-volume", "configMap": {"name": "coredns-custom", "optional": True, "defaultMode": 420}}]}}
_, dns_pods = c.deployment("coredns", "kube-system", dict(MANAGED, **{"k8s-app": "kube-dns", "kubernetes.io/name": "CoreDNS", "version": "v20"}),
                           dns_tmpl, 2, system, selector={"k8s-app": "kube-dns"},
                           strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "10%"}})
as_tmpl = {"metadata": {"labels": {"k8s-app": "coredns-autoscaler"}},
           "spec": {"priorityClassName": "system-cluster-critical", "serviceAccountName": "coredns-autoscaler",
                    "affinity": SYS_PREF, "tolerations": [CAO],
                    "containers": [ctr("autoscaler", "mcr.microsoft.com/oss/v2/kubernetes/autoscaler/cluster-proportional-autoscaler:v1.9.0-12",
                                       command=["/cluster-proportional-autoscaler", "--namespace=kube-system",
                                                "--configmap=coredns-autoscaler", "--target=deployment/coredns",
                                                "--default-params={\"ladder\":{\"coresToReplicas\":[[1,2],[512,3],[1024,4],[2048,5]],\"nodesToReplicas\":[[1,2],[8,3],[16,4],[32,5]]}}",
                                                "--logtostderr=true", "--v=2"])]}}
c.deployment("coredns-autoscaler", "kube-system", dict(MANAGED, **{"k8s-app": "coredns-autoscaler"}), as_tmpl, 1, system)
kn_tmpl = {"metadata": {"labels": {"app": "konnectivity-agent"}},
           "spec": {"priorityClassName": "system-cluster-critical", "serviceAccountName": "konnectivity-agent",
                    "affinity": SYS_PREF, "tolerations": [CAO], "topologySpreadConstraints": SPREAD({"app": "konnectivity-agent"}),
                    "containers": [ctr("konnectivity-agent", "mcr.microsoft.com/oss/v2/kubernetes/apiserver-network-proxy/agent:v0.32.1-2",
                                       command=["/proxy-agent"],
                                       args=["--logtostderr=true", "--ca-cert=/certs/ca.crt", "--proxy-server-host=konnectivity.aks-prod-8f3c2b1a.hcp.eastus2.azmk8s.io",
                                             "--proxy-server-port=443", "--health-server-port=8082", "--agent-identifiers=ipv4=$(POD_IP)"],
                                       env=[{"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}}],
                                       livenessProbe={"httpGet": {"path": "/healthz", "port": 8082, "scheme": "HTTP"}})]}}
_, kn_pods = c.deployment("konnectivity-agent", "kube-system", dict(MANAGED, **{"app": "konnectivity-agent"}), kn_tmpl, 2, system)
ms_tmpl = {"metadata": {"labels": {"k8s-app": "metrics-server"}},
           "spec": {"priorityClassName": "system-cluster-critical", "serviceAccountName": "metrics-server",
                    "affinity": SYS_PREF, "tolerations": [CAO], "topologySpreadConstraints": SPREAD({"k8s-app": "metrics-server"}),
                    "containers": [ctr("metrics-server", "mcr.microsoft.com/oss/v2/kubernetes/metrics-server:v0.7.2-6",
                                       command=["/metrics-server", "--kubelet-insecure-tls",
                                                "--kubelet-preferred-address-types=InternalIP", "--cert-dir=/tmp",
                                                "--secure-port=4443", "--metric-resolution=15s"],
                                       ports=[{"containerPort": 4443, "name": "https", "protocol": "TCP"}],
                                       readinessProbe={"httpGet": {"path": "/readyz", "port": "https", "scheme": "HTTPS"}},
                                       securityContext={"readOnlyRootFilesystem": True, "runAsNonRoot": True, "runAsUser": 1000})]}}
_, ms_pods = c.deployment("metrics-server", "kube-system", dict(MANAGED, **{"k8s-app": "metrics-server"}), ms_tmpl, 2, system)

# --- Services and budgets --------------------------------------------------
c.service("kube-dns", "kube-system", {"k8s-app": "kube-dns"},
          [{"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
           {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53}],
          "10.0.0.10", labels=dict(MANAGED, **{"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS"}),
          pods=dns_pods)
c.service("metrics-server", "kube-system", {"k8s-app": "metrics-server"},
          [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 4443}],
          "10.0.241.105", labels=dict(MANAGED, **{"k8s-app": "metrics-server", "kubernetes.io/cluster-service": "true"}),
          pods=ms_pods)
c.pdb("coredns-pdb", "kube-system", {"k8s-app": "kube-dns"}, dns_pods, min_available=1, labels=MANAGED)
c.pdb("konnectivity-agent", "kube-system", {"app": "konnectivity-agent"}, kn_pods, min_available=1, labels=MANAGED)
c.pdb("metrics-server-pdb", "kube-system", {"k8s-app": "metrics-server"}, ms_pods, min_available=1, labels=MANAGED)

# --- Admission -------------------------------------------------------------
# The node mutating webhook as dumped in kubernetes/autoscaler#7392: served
# by the hosted control plane (a URL, not a Service), nodes CREATE only.
c.webhook_config("Mutating", "aks-node-mutating-webhook", [{
    "name": "aks-node-mutating-webhook.azmk8s.io", "admissionReviewVersions": ["v1beta1"],
    "clientConfig": {"url": "https://ccp-webhook.68a1f0c2e3d4b5000112aa34.svc.cluster.local.:8443/mutate-nodes",
                     "caBundle": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="},
    "failurePolicy": "Fail", "matchPolicy": "Equivalent", "reinvocationPolicy": "Never",
    "namespaceSelector": {}, "objectSelector": {},
    "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["nodes"], "scope": "*"}],
    "sideEffects": "NoneOnDryRun", "timeoutSeconds": 5}],
    labels={"admissions.enforcer/disabled": "true", "kubernetes.azure.com/controlPlaneWebhook": "Reconcile"})

# aks-webhook-admission-controller: pods CREATE in user namespaces reach it
# (Azure/AKS#2197, a pod in default). Backend in the control plane; the
# selector leaving out control-plane namespaces and failurePolicy Fail are
# inferred (see README).
c.webhook_config("Mutating", "aks-webhook-admission-controller", [{
    "name": "aks-webhook-admission-controller.azmk8s.io", "admissionReviewVersions": ["v1", "v1beta1"],
    "clientConfig": {"url": "https://aks-webhook-admission-controller.aks-control-plane.invalid/mutate", "caBundle": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="},
    "failurePolicy": "Fail", "matchPolicy": "Equivalent", "reinvocationPolicy": "Never",
    "namespaceSelector": {"matchExpressions": [{"key": "control-plane", "operator": "DoesNotExist"}]}, "objectSelector": {},
    "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"], "scope": "*"}],
    "sideEffects": "None", "timeoutSeconds": 10}],
    labels={"admissions.enforcer/disabled": "true", "kubernetes.azure.com/controlPlaneWebhook": "Reconcile"})
# aks-node-validating-webhook exists too (kubectl listings); its rules are
# not published, so it is left out.

# --- Events ----------------------------------------------------------------
# Readiness probes that fail while CoreDNS and metrics-server start, then pass.
c.event(dns_pods[0], "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503", 3,
        "2026-11-24T09:14:02Z", "2026-11-24T09:14:08Z", "kubelet", dns_pods[0]["spec"]["nodeName"])
c.event(ms_pods[1], "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 500", 2,
        "2026-11-24T09:14:20Z", "2026-11-24T09:14:35Z", "kubelet", ms_pods[1]["spec"]["nodeName"])

api = BUILTIN_API_RESOURCES + """volumesnapshotclasses.snapshot.storage.k8s.io
volumesnapshotcontents.snapshot.storage.k8s.io
volumesnapshots.snapshot.storage.k8s.io
nodenetworkconfigs.acn.azure.com
clusterpodnetworks.acn.azure.com
nodes.metrics.k8s.io
pods.metrics.k8s.io""".split("\n")
# metrics-server registers the resource metrics API.
c.apiservice("metrics.k8s.io", "v1beta1", "kube-system", "metrics-server")

# Built-in storage (learn.microsoft.com/azure/aks/create-volume-azure-disk and
# csi-storage-drivers): Azure Disk and Azure Files CSI drivers with their
# classes; the disk class "default" is the default.
c.storageclass("default", "disk.csi.azure.com", default=True, params={"skuname": "StandardSSD_LRS"})
c.storageclass("managed-csi-premium", "disk.csi.azure.com", params={"skuname": "Premium_LRS"})
c.storageclass("azurefile-csi", "file.csi.azure.com", binding="Immediate", params={"skuName": "Standard_LRS"})
c.storageclass("azurefile-csi-premium", "file.csi.azure.com", binding="Immediate", params={"skuName": "Premium_LRS"})
c.csidriver("disk.csi.azure.com")
c.csidriver("file.csi.azure.com", attach=False)

c.write(sys.argv[1], api, version_doc("v1.34.7", hexid(40, "aks", "commit"), "2026-05-12T18:00:00Z", "go1.24.12"))
