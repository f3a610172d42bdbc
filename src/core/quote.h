// Quoting text that came from a file (a name, a key, a token) or from outside (argv, an error
// message) before it goes into an error line.
//
// Contract: the result is one line of printable text. Control bytes (C0, DEL, the C1 controls
// U+0080..U+009F), bytes that are not valid UTF-8, the backslash and (in quote()) the single quote are
// escaped (\n \r \t \\ \' \xNN), so a name from a file can neither split an error over lines, forge
// another "ork: error:" line, nor send terminal escapes. Valid UTF-8 above U+009F is kept as it is.
// At most `max_bytes` of the input are shown; a longer input ends in "..." and says its size.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ork {

constexpr size_t kQuoteMaxBytes = 120;    // a name in an error
constexpr size_t kErrorLineMaxBytes = 1000;  // a whole error line (the CLI's last line of defence)

// 'name' in single quotes, escaped and capped as above: "'blk.0\nork: error: x'" → "'blk.0\\nork: error: x'".
// A capped name reads "'first max_bytes bytes...' (N bytes)".
std::string quote(std::string_view s, size_t max_bytes = kQuoteMaxBytes);

// The same escaping of control bytes and invalid UTF-8, without the quotes and with the backslash and
// the single quote kept (a message holding quote()d names reads as it was written), capped at max_bytes of input with a
// "... (N bytes)" tail: for a whole message of unknown origin.
std::string one_line(std::string_view s, size_t max_bytes = kErrorLineMaxBytes);

}  // namespace ork
