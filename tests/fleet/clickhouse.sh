# Sourced by the fleet tests: Debian's clickhouse-server run as a plain
# process, never the system service: a temporary config, data directory and
# loopback ports per server; every server started here is stopped by
# ch_stop_all (the caller's trap).
#   ch_start NAME HTTP_PORT TCP_PORT [CLUSTER_TCP_PORTS...]
#   ch_query NAME SQL         (over HTTP with curl; prints the answer)
#   ch_stop NAME / ch_restart NAME / ch_stop_all
CH_BIN=${CH_BIN:-/usr/sbin/clickhouse-server}
CH_DIR=${CH_DIR:-$(mktemp -d /tmp/ftstack-ch.XXXXXX)}
declare -A CH_PID CH_PORT

# Writes NAME's config: loopback only, the test user's password, a cluster
# `ftstack_test` over the TCP ports given (one shard each), synchronous
# inserts into Distributed tables so what was inserted is there at once.
ch_config() {
	local name=$1 http=$2 tcp=$3 d=$CH_DIR/$1 shards="" p; shift 3
	mkdir -p "$d/data/tmp" "$d/data/user_files" "$d/log"
	for p in "$@"; do
		shards="$shards<shard><replica><host>127.0.0.1</host><port>$p</port></replica></shard>"
	done
	cat >"$d/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$d/log/server.log</log><errorlog>$d/log/err.log</errorlog></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>$http</http_port>
  <tcp_port>$tcp</tcp_port>
  <interserver_http_port>$((tcp + 9))</interserver_http_port>
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <max_connections>64</max_connections>
  <keep_alive_timeout>1</keep_alive_timeout>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <path>$d/data/</path>
  <tmp_path>$d/data/tmp/</tmp_path>
  <user_files_path>$d/data/user_files/</user_files_path>
  <users_config>$d/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <remote_servers><ftstack_test>$shards</ftstack_test></remote_servers>
</yandex>
XML
	cat >"$d/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>2000000000</max_memory_usage><insert_distributed_sync>1</insert_distributed_sync></default></profiles>
  <users>
    <default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default>
    <tester><password>s3cr\$t'pw</password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></tester>
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
XML
}

# ch_up NAME: starts NAME's server from its config and waits for its HTTP port.
ch_up() {
	local name=$1 d=$CH_DIR/$1 i
	"$CH_BIN" --config-file="$d/config.xml" >"$d/log/stdout" 2>&1 &
	CH_PID[$name]=$!
	for i in $(seq 300); do
		[ "$(curl -s "http://127.0.0.1:${CH_PORT[$name]}/ping" 2>/dev/null)" = "Ok." ] && return 0
		kill -0 "${CH_PID[$name]}" 2>/dev/null || break
		sleep 0.1
	done
	echo "# clickhouse-server $name did not start:" >&2
	tail -5 "$d/log/err.log" "$d/log/stdout" >&2 2>/dev/null
	return 1
}

ch_start() {
	local name=$1
	CH_PORT[$name]=$2
	ch_config "$@"
	ch_up "$name"
}

ch_stop() {
	local name=$1 pid=${CH_PID[$1]:-} i
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null
	for i in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
	if kill -KILL "$pid" 2>/dev/null; then
		echo "# clickhouse-server $name ignored SIGTERM for 10 s: killed" >&2
	fi
	wait "$pid" 2>/dev/null
	CH_PID[$name]=
}

ch_stop_all() {
	local n
	for n in "${!CH_PID[@]}"; do ch_stop "$n"; done
	rm -rf "$CH_DIR"
}

# ch_query NAME SQL: the answer on stdout; non-zero on an HTTP error
ch_query() {
	curl -sS --fail-with-body "http://127.0.0.1:${CH_PORT[$1]}/" --data-binary "$2"
}

# ch_available: the server binary is there (tests/deps.sh installs it)
ch_available() { [ -x "$CH_BIN" ]; }
