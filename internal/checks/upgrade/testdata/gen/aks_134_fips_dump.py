#!/usr/bin/env python3
"""Writes testdata/aks-134-fips-dump/: issue 24's "no server version" case.

The managed AKS 1.34 fixture (internal/checks/testdata/managed/aks, a recipe
dump of a fresh cluster: all kubelets v1.34.7, azure-cns on the static
mcr.microsoft.com/containernetworking/azure-cni installer, kube-proxy
v1.34.7-2) without its version.json, plus the demo's two Ubuntu 20.04 FIPS
nodes (internal/demo/cluster/nodes.yaml, pool fips2004, kubelet v1.34.3)
joined to the same cluster. Run from internal/checks/upgrade/testdata:
python3 gen/aks_134_fips_dump.py
"""
import json
import os
import shutil

SRC = "../../testdata/managed/aks"
DST = "aks-134-fips-dump"

shutil.rmtree(DST, ignore_errors=True)
shutil.copytree(SRC, DST)
os.remove(os.path.join(DST, "version.json"))

path = os.path.join(DST, "nodes.json")
with open(path) as f:
    nodes = json.load(f)
template = nodes["items"][0]
for i in range(2):
    n = json.loads(json.dumps(template))
    name = "aks-fips2004-1000000%d" % i
    n["metadata"]["name"] = name
    n["metadata"]["uid"] = "fips2004-%d" % i
    n["metadata"]["creationTimestamp"] = "2025-05-21T08:00:00Z"
    labels = n["metadata"]["labels"]
    labels.update({
        "agentpool": "fips2004",
        "kubernetes.azure.com/agentpool": "fips2004",
        "kubernetes.azure.com/node-image-version": "AKSUbuntu-2004fipscontainerd-202505.20.0",
        "kubernetes.azure.com/fips_enabled": "true",
        "kubernetes.azure.com/mode": "user",
        "kubernetes.io/hostname": name,
    })
    n["spec"]["providerID"] = ("azure:///subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/"
                               "mc_contoso_prod_westeurope/providers/Microsoft.Compute/virtualMachineScaleSets/"
                               "aks-fips2004-100000-vmss/virtualMachines/%d" % i)
    n["spec"].pop("taints", None)
    info = n["status"]["nodeInfo"]
    info.update({"osImage": "Ubuntu 20.04.6 LTS", "kernelVersion": "5.4.0-1140-azure-fips",
                 "kubeletVersion": "v1.34.3", "containerRuntimeVersion": "containerd://1.7.27-1"})
    for a in n["status"].get("addresses", []):
        if a["type"] == "Hostname":
            a["address"] = name
    nodes["items"].append(n)
with open(path, "w") as f:
    json.dump(nodes, f, indent=2)
    f.write("\n")
