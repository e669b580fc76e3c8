import Foundation

/// A non-recursive check of how deeply a JSON text nests, run before a recursive decoder sees it.
///
/// `JSONDecoder` into ``JSONValue`` recurses once per level, and a secondary thread on Apple
/// platforms has a 512 KiB stack: a few hundred levels from a server or a planted file would
/// overflow it and crash the app. The scan counts `[` and `{` outside strings; it validates nothing
/// else (the decoder does), so it is cheap and cannot itself be made to recurse.
package enum JSONDepth {
    /// The deepest nesting the SDK accepts from a server or a stored file: 64 levels (the formats
    /// need at most 7; tracked properties are capped at 64 too, see Behaviour E6).
    package static let maximum = 64

    /// Whether arrays and objects in `data` nest deeper than `limit`.
    package static func exceeds(_ limit: Int = maximum, in data: Data) -> Bool {
        data.withUnsafeBytes { bytes in
            var depth = 0
            var inString = false
            var escaped = false
            for byte in bytes {
                if inString {
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inString = false
                    }
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""):
                    inString = true
                case UInt8(ascii: "["), UInt8(ascii: "{"):
                    depth += 1
                    if depth > limit { return true }
                case UInt8(ascii: "]"), UInt8(ascii: "}"):
                    depth = max(0, depth - 1)
                default:
                    break
                }
            }
            return false
        }
    }
}
