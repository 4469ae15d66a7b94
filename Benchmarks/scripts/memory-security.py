"""The cost of SQLCipher 4's cipher_memory_security on this engine.

The engine's own `sqlcipher` shell inserts 100,000 rows into a new encrypted
database and scans them, with the setting off (every engine's default) and
on, in interleaved rounds; prints the median CPU time (user + sys, from the
shell's .timer) of each and their ratio. Run by scripts/bench-engine.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
WORK = """
.timer on
CREATE TABLE t(a INTEGER, b TEXT, c REAL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
INSERT INTO t SELECT i, hex(randomblob(16)), i * 0.5 FROM n;
SELECT count(*), sum(length(b)) FROM t;
"""


def run(on):
    with tempfile.TemporaryDirectory() as folder:
        script = "PRAGMA key = 'benchmark';\nPRAGMA cipher_memory_security = %s;\n%s" % ("ON" if on else "OFF", WORK)
        out = subprocess.run(["sqlcipher", "-batch", os.path.join(folder, "m.db")], input=script,
                             capture_output=True, text=True, check=True).stdout
    times = re.findall(r"Run Time: real [\d.]+ user ([\d.]+) sys ([\d.]+)", out)
    return sum(float(user) + float(system) for user, system in times)


answer = subprocess.run(["sqlcipher", "-batch", ":memory:"], input="PRAGMA key = 'x';\nPRAGMA cipher_memory_security;\n",
                        capture_output=True, text=True).stdout.split()
if "ok" in answer:
    answer.remove("ok")
if not answer:
    print("cipher_memory_security: not in this engine")
    sys.exit(0)
off, on = [], []
for _ in range(ROUNDS):
    off.append(run(False))
    on.append(run(True))
print("cipher_memory_security (default %s): 100000-row insert and scan in the sqlcipher shell, %d interleaved rounds, CPU time"
      % ("on" if answer[0] == "1" else "off", ROUNDS))
print("  off %7.3f s   on %7.3f s   ratio %.2fx" % (statistics.median(off), statistics.median(on),
                                                    statistics.median(on) / statistics.median(off)))
