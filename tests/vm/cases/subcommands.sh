# Subcommands after global options (ftstack --debug check / cleanup) run the
# subcommand, not a count of an event with that name; kernel state as found.
have_ftstack || { ok "subcommand cases # SKIP ftstack not built"; exit 0; }
state() { cat $T/kprobe_events $T/uprobe_events 2>/dev/null; ls $T/instances; }
before=$(state)
$FTSTACK --debug cleanup >$TMP/o 2>$TMP/e
expect_eq "--debug cleanup: exit status" $? 0
check "--debug cleanup: ran cleanup" grep -q 'left by dead ftstack runs removed' $TMP/o
check "--debug cleanup: not read as an event" sh -c "! grep -qi 'tracepoint\|malformed' $TMP/e"
$FTSTACK --debug check >$TMP/o 2>$TMP/e
expect_eq "--debug check: exit status" $? 0
check "--debug check: the capability report" grep -qi kprobe $TMP/o
check "--debug check: debug lines on stderr" grep -q 'ftstack: debug:' $TMP/e
expect_eq "subcommands: kernel state as found" "$(state)" "$before"
