# Sourced by the project's scripts: tool paths and the settings that keep trunk offline.
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
# Trunk's own update check would reach the network.
export TRUNK_SKIP_VERSION_CHECK=true
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
