// UTF-8 helpers and the GPT-2 byte↔unicode table used by the tokenizer. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ork::model::utf8 {

// Bytes of the character whose lead byte is `lead`, by its high bits only (llama.cpp's
// unicode_len_utf8): 0x00-0xBF → 1, 0xC0-0xDF → 2, 0xE0-0xEF → 3, 0xF0-0xFF → 4. Callers clamp to
// the bytes left. Used by SPM, which splits raw bytes without validating them.
size_t len_from_lead(uint8_t lead);

// Length of the well-formed UTF-8 sequence at s[i] (1-4), or 0 when the bytes there are not one
// (stray continuation byte, truncated sequence, overlong form, surrogate, above U+10FFFF).
// Precondition: i < s.size().
size_t valid_len(std::string_view s, size_t i);

// `s` with every byte that does not begin a well-formed sequence replaced by U+FFFD (EF BF BD),
// one replacement per byte — what llama.cpp's unicode_cpts_from_utf8 does (it is laxer about
// overlong forms and surrogates, which it lets through). Returns `s` unchanged when valid.
std::string sanitize(std::string_view s);

// Appends the UTF-8 encoding of code point `cp` (≤ 0x10FFFF) to `out`.
void append(uint32_t cp, std::string& out);

}  // namespace ork::model::utf8

namespace ork::model::byte_unicode {

// The GPT-2 table (OpenAI encoder.py bytes_to_unicode; llama.cpp unicode_byte_to_utf8_map):
// bytes 0x21-0x7E, 0xA1-0xAC, 0xAE-0xFF map to the same code point; the other 68 bytes map, in
// increasing order, to U+0100, U+0101, ... (so ' ' → U+0120 'Ġ', '\n' → U+010A 'Ċ').
uint32_t code_point(uint8_t byte);
// The UTF-8 text of code_point(byte).
std::string_view text(uint8_t byte);
// The byte whose code point is `cp`, or -1 when `cp` is not in the table.
int byte_of(uint32_t cp);
// Maps every byte of `bytes` through the table and appends the UTF-8 result to `out`.
void encode(std::string_view bytes, std::string& out);
// Inverse of encode: each character of `text` that is in the table becomes its byte; any other
// character (e.g. a raw CJK character in an added token) is copied through as its UTF-8 bytes,
// and invalid UTF-8 bytes are copied as they are.
std::string decode(std::string_view text);

}  // namespace ork::model::byte_unicode
