import Foundation

/// A non-recursive check of how deeply a JSON text nests, run before a recursive decoder sees it.
///
/// `JSONDecoder` into ``JSONValue`` recurses once per level, and a secondary thread on Apple
/// platforms has a 512 KiB stack: a few hundred levels from a server or a planted file would
/// overflow it and crash the app. The scan counts `[` and `{` outside strings; it validates nothing
/// else (the decoder does), so it is cheap and cannot itself be made to recurse.
package enum JSONDepth {
    /// The deepest nesting the SDK accepts from a server or a stored document, and the deepest
    /// properties of a tracked item (the properties object itself is level 1): 64 levels. The
    /// formats need at most 7; tracked properties are capped at 64 (<doc:Behaviour#E6>,
    /// <doc:Behaviour#P9>).
    package static let maximum = 64

    /// The levels an event's properties sit inside when stored or sent: 2 in a journal line
    /// (`{"op":…,"event":{…,"properties":{…}}}`), 1 in an upload body (`{"properties":{…}}`).
    package static let envelopeLevels = 2

    /// The deepest text that carries an event at ``maximum``: a journal line or an upload body,
    /// 66 levels. Everything the SDK decodes, encodes and re-uploads stays within it, and it fits
    /// a 512 KiB thread stack with a wide margin in debug and release builds (<doc:Behaviour#P9>;
    /// `Scripts/stack-depth.sh` measures the margin).
    package static let envelopeMaximum = maximum + envelopeLevels

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
