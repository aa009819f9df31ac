# Deployment targets, included by the top-level Makefile (`include deploy/deploy.mk`).
# Uses PY and STAMP from the Makefile when present.
#   make deploy-tools     install the pinned linters/validators and podman, runc, debootstrap, bwrap
#   make image            build $(IMAGE) with podman, offline (debootstrapped base, host-fetched wheels)
#   make container-test   run $(IMAGE) under the compose profile: PROMOTE, REJECT, invalid contract
#   make hardened-test    the job under bubblewrap as uid 65532 (read-only root, no network, no caps)
#   make deploy-check     every static check: kubernetes-validate, checkov, hadolint, cfn-lint, compose
#   make deploy-lock      regenerate deploy/docker/requirements.lock (needs PyPI)
#   make deploy-sync      regenerate deploy/k8s's generated files after the example or render changes
PY ?= .venv/bin/python
STAMP ?=
IMAGE ?= localhost/ragwarrant:dev
# The Dockerfile's default base (its ARG line): what `make image` builds is the documented default.
BASE_IMAGE ?= $(shell sed -n 's/^ARG BASE_IMAGE=//p' deploy/docker/Dockerfile)
CONTAINERS_CONF ?= $(CURDIR)/deploy/podman/containers.conf
DEPLOY_TOOLS_STAMP := build/deploy-tools/venv/.pins build/deploy-tools/checkov/.pins

.PHONY: deploy-tools image container-test hardened-test deploy-check deploy-lock deploy-sync

$(DEPLOY_TOOLS_STAMP) &: scripts/install-ci-tools.sh
	bash scripts/install-ci-tools.sh

deploy-tools: $(DEPLOY_TOOLS_STAMP)

image: $(STAMP) $(DEPLOY_TOOLS_STAMP)
	IMAGE=$(IMAGE) BASE_IMAGE=$(BASE_IMAGE) CONTAINERS_CONF=$(CONTAINERS_CONF) \
	  PYTHON=$(PY) bash scripts/deploy/build-image.sh

container-test: $(STAMP) $(DEPLOY_TOOLS_STAMP)
	RAGWARRANT_CONTAINER_TEST=1 RAGWARRANT_IMAGE=$(IMAGE) CONTAINERS_CONF=$(CONTAINERS_CONF) \
	  RAGWARRANT_REQUIRE_DEPLOY_TOOLS=1 $(PY) -m pytest tests/deploy/test_container.py

hardened-test: $(STAMP) $(DEPLOY_TOOLS_STAMP)
	RAGWARRANT_REQUIRE_DEPLOY_TOOLS=1 $(PY) -m pytest tests/hardened

deploy-check: $(STAMP) $(DEPLOY_TOOLS_STAMP)
	RAGWARRANT_REQUIRE_DEPLOY_TOOLS=1 $(PY) -m pytest tests/deploy --ignore=tests/deploy/test_container.py

deploy-lock: $(DEPLOY_TOOLS_STAMP)
	bash scripts/deploy/lock.sh

deploy-sync: $(STAMP)
	$(PY) scripts/deploy/sync_k8s.py
