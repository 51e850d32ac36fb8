# Leaves traces a later call must not see: a file in its scratch folder ($TMPDIR, the jail's
# private /tmp), a process still running, an exported variable.
echo secret > "$TMPDIR/left-behind"
export LEFT_BEHIND=secret
sleep 300 > /dev/null 2>&1 &
if [ -f "$TMPDIR/left-behind" ]; then echo '{"left": true}'; else echo '{"left": false}'; fi
