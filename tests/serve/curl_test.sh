#!/usr/bin/env bash
# ork serve spoken to with curl (loopback only): a chat completion, an SSE stream ending with
# data: [DONE], an Ollama NDJSON stream ending with done:true, a 400 naming the field, and a client
# killed with SIGKILL mid-stream leaving the server healthy. Usage: curl_test.sh BUILD_DIR
set -euo pipefail
ork="$1/ork"
tmp="$(mktemp -d)"
"$ork" serve --host 127.0.0.1 --port 0 --parallel 2 --ctx 4096 -t 1 >"$tmp/port" 2>"$tmp/err" &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$tmp"' EXIT
for _ in $(seq 1 600); do [ -s "$tmp/port" ] && break; sleep 0.05; done
port="$(head -1 "$tmp/port")"
url="http://127.0.0.1:$port"
fail() { echo "curl_test: $*" >&2; exit 1; }

body='{"messages":[{"role":"user","content":"Love is"}],"max_tokens":8,"temperature":0}'
out="$(curl -sS "$url/v1/chat/completions" -d "$body")"
grep -q '"object":"chat.completion"' <<<"$out" || fail "no chat completion: $out"
grep -q '"finish_reason":"length"' <<<"$out" || fail "max_tokens did not give length: $out"

sse="$(curl -sSN "$url/v1/chat/completions" -d "${body%\}},\"stream\":true}")"
[ "${sse: -12}" = "data: [DONE]" ] || fail "the stream does not end with data: [DONE]: $(tail -c 200 <<<"$sse")"

nd="$(curl -sSN "$url/api/chat" -d '{"messages":[{"role":"user","content":"Hi"}],"options":{"num_predict":4}}')"
tail -n 1 <<<"$nd" | grep -q '"done":true' || fail "the NDJSON stream does not end with done:true: $nd"

code="$(curl -s -o "$tmp/bad" -w '%{http_code}' "$url/v1/chat/completions" -d '{"messages":[{"role":"user"}]}')"
[ "$code" = 400 ] || fail "missing content gave HTTP $code"
grep -q '"param":"messages\[0\].content"' "$tmp/bad" || fail "the error does not name the field: $(cat "$tmp/bad")"

# kill -9 of a client mid-stream (a greedy loop that would run to the end of the 4096-token context).
curl -sSN "$url/v1/completions" -d '{"prompt":"of the morning of the","temperature":0,"stream":true}' >"$tmp/cut" &
client=$!
for _ in $(seq 1 600); do [ -s "$tmp/cut" ] && break; sleep 0.05; done
kill -9 "$client"
wait "$client" 2>/dev/null || true
for _ in $(seq 1 600); do
  curl -sS "$url/health" | grep -q '"slots_busy":0' && break
  sleep 0.05
done
curl -sS "$url/health" | grep -q '"slots_busy":0' || fail "a slot stayed busy after the client was killed"
out="$(curl -sS "$url/v1/completions" -d '{"prompt":"ok","max_tokens":2}')"
grep -q '"finish_reason":"length"' <<<"$out" || fail "not serving after the killed client: $out"
echo "curl_test: ok"
