import Foundation

/// Whether a tracked item can be uploaded and replayed after a restart (<doc:Behaviour#E6>),
/// checked before it is queued so that nothing accepted is ever skipped later.
///
/// The walk is iterative (an explicit stack), so a value nested thousands of levels deep is
/// measured without recursing once per level, and it stops at the first problem.
package enum ReplayableEvent {
    /// The deepest nesting of arrays and objects accepted in properties (``JSONDepth/maximum``):
    /// the journal line or upload body around them nests ``JSONDepth/envelopeMaximum``, which
    /// the journal's reader accepts and a 512 KiB thread stack decodes and encodes (<doc:Behaviour#P9>).
    /// Items read back from the journal are checked again.
    package static let maximumDepth = JSONDepth.maximum
    /// The largest accepted item, counted as its properties encoded as JSON: 64 KiB.
    package static let maximumEncodedSize = 64 << 10
    /// The accepted timestamps, in seconds since 2001-01-01 UTC: from `Date.distantPast` to
    /// `Date.distantFuture` (years 1 to 4001). The journal's reader accepts exactly this range
    /// (<doc:Behaviour#P7>), so an item stamped outside it is refused now rather than lost at the next
    /// start.
    package static let timestampRange = Date.distantPast.timeIntervalSinceReferenceDate...Date.distantFuture.timeIntervalSinceReferenceDate

    /// Throws ``SegmentsError`` `.invalidConfiguration` when `timestamp` is not finite or outside
    /// ``timestampRange``.
    package static func check(timestamp: Date) throws(SegmentsError) {
        guard timestampRange.contains(timestamp.timeIntervalSinceReferenceDate) else {
            throw SegmentsError(
                .invalidConfiguration,
                "The event's timestamp is outside the years 1 to 4001; it could not be replayed after a restart")
        }
    }

    /// Throws ``SegmentsError`` `.invalidConfiguration` naming the problem when `properties` nest
    /// deeper than 64 levels (the properties object itself is level 1), hold a non-finite number,
    /// or encode to more than 64 KiB. Items read back from the queue's file are checked with it;
    /// tracking uses ``accepting(_:root:)``, which drops non-finite numbers instead.
    ///
    /// The size is tested as soon as it grows: a container's brackets and commas are counted, and
    /// tested, before its elements are stacked, so an array of millions of elements is refused
    /// without stacking them (the stack never holds more entries than 64 KiB of items can have).
    /// The event journal's reader counts properties it keeps as text the same way
    /// (``JSONReader/TextMember``).
    package static func check(_ properties: [String: JSONValue]) throws(SegmentsError) {
        if try walk(properties) { throw nonFiniteRefused() }
    }

    /// The properties as they are tracked (<doc:Behaviour#E6> rev 4): a non-finite number (NaN,
    /// ±infinity) is no reason to refuse, it is dropped — its key, or its array element — and its
    /// key path is named in ``Accepted/dropped`` (e.g. `properties.cart[2].price`) for the caller's one
    /// warning. Throws ``SegmentsError`` `.invalidConfiguration` naming the rule for properties nested
    /// deeper than 64 levels or larger than 64 KiB encoded (a dropped number counts as kept: the
    /// bound stays an upper bound).
    ///
    /// Properties without a non-finite number, the usual case, are returned as given, after one
    /// walk that allocates nothing for flat properties (the caller's cost, <doc:Behaviour#R2>).
    /// - Parameter root: the name the paths start with (`properties`, `defaultProperties`).
    package static func accepting(_ properties: [String: JSONValue], root: String = "properties") throws(SegmentsError) -> Accepted {
        guard try walk(properties) else { return Accepted(properties: properties, dropped: []) }
        var dropped: [String] = []
        // The walk above bounded the depth at 64 levels: this recursion is shallow.
        let kept = NonFiniteNumbers.dropped(from: properties, path: root, into: &dropped)
        return Accepted(properties: kept, dropped: dropped)
    }

    /// Properties as ``accepting(_:root:)`` accepted them.
    package struct Accepted: Sendable, Equatable {
        /// What is tracked: the properties without their non-finite numbers.
        package var properties: [String: JSONValue]
        /// The key path of every value dropped, in a stable order; empty when nothing was.
        package var dropped: [String]

        /// The one warning for the values dropped (<doc:Behaviour#E6>), naming every key path (at most
        /// ten, then how many more); `nil` when nothing was dropped.
        package func warning(for call: String) -> String? {
            guard !dropped.isEmpty else { return nil }
            let named = dropped.prefix(10).joined(separator: ", ")
            let more = dropped.count > 10 ? " and \(dropped.count - 10) more" : ""
            return "Tracking: \(call) dropped a non-finite number (NaN or infinity), which JSON cannot carry, at \(named)\(more); the rest is tracked"
        }
    }

    /// Checks depth and size; returns whether a non-finite number was found (it is counted as a
    /// number of the largest size, so the size bound holds once it is dropped).
    private static func walk(_ properties: [String: JSONValue]) throws(SegmentsError) -> Bool {
        var nonFinite = false
        var size = 2  // {}
        // Only containers are stacked: flat properties, the usual event, are checked without
        // allocating (the caller's cost, <doc:Behaviour#R2>).
        var stack: [(value: JSONValue, depth: Int)] = []
        for (key, value) in properties {
            size += encodedSize(of: key) + 2
            try checkSize(size)
            switch value {
            case .array, .object:
                stack.append((value, 2))
            default:
                size += scalarSize(of: value, nonFinite: &nonFinite)
                try checkSize(size)
            }
        }
        while let (value, depth) = stack.popLast() {
            switch value {
            case .array(let items):
                guard depth <= maximumDepth else { throw tooDeep() }
                size += 2 + items.count
                try checkSize(size)
                for item in items { stack.append((item, depth + 1)) }
            case .object(let members):
                guard depth <= maximumDepth else { throw tooDeep() }
                size += 2 + members.count
                for key in members.keys {
                    size += encodedSize(of: key) + 1
                    try checkSize(size)
                }
                for item in members.values { stack.append((item, depth + 1)) }
            default:
                size += scalarSize(of: value, nonFinite: &nonFinite)
            }
            try checkSize(size)
        }
        return nonFinite
    }

    /// What a scalar adds to the count (``encodedSize(of:)-(JSONValue)``); notes a non-finite number.
    private static func scalarSize(of value: JSONValue, nonFinite: inout Bool) -> Int {
        if case .double(let number) = value, !number.isFinite { nonFinite = true }
        return encodedSize(of: value)
    }

    private static func nonFiniteRefused() -> SegmentsError {
        SegmentsError(.invalidConfiguration, "The event holds a non-finite number, which JSON cannot carry")
    }

    /// What one scalar adds to the count: an upper bound of its JSON encoding (`null` 4, `true` 4,
    /// `false` 5, a whole number 19 or, negative, 20 characters, any other number 24, a string as
    /// ``encodedSize(of:)-(String)``). An array or object adds 2, plus one per element and, for an
    /// object, each key's size plus one; they are counted by ``check(_:)``.
    package static func encodedSize(of value: JSONValue) -> Int {
        switch value {
        case .null: 4
        case .bool(let flag): flag ? 4 : 5
        case .int(let number): 20 - (number >= 0 ? 1 : 0)
        case .double: 24
        case .string(let text): encodedSize(of: text)
        case .array, .object: 2
        }
    }

    private static func checkSize(_ size: Int) throws(SegmentsError) {
        if size > maximumEncodedSize {
            throw SegmentsError(
                .invalidConfiguration,
                "The event is larger than \(maximumEncodedSize / 1024) KiB encoded; it could not be uploaded")
        }
    }

    private static func tooDeep() -> SegmentsError {
        SegmentsError(
            .invalidConfiguration,
            "The event's properties nest deeper than \(maximumDepth) levels; it could not be replayed after a restart")
    }

    /// An upper bound of the string's JSON encoding: quotes, six bytes for a control character,
    /// two for a quote, backslash or slash (`JSONEncoder` writes `\/`).
    package static func encodedSize(of text: String) -> Int {
        // Read through the string's own buffer where it has one (the usual case): this runs for
        // every key and string of every tracked item, on the caller's thread (R2).
        text.utf8.withContiguousStorageIfAvailable(encodedSize(ofBytes:)) ?? encodedSize(ofBytes: text.utf8)
    }

    private static func encodedSize<Bytes: Sequence<UInt8>>(ofBytes bytes: Bytes) -> Int {
        var size = 2
        for byte in bytes {
            size += byte < 0x20 ? 6 : (byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")) ? 2 : 1
            if byte == UInt8(ascii: "/") { size += 1 }
        }
        return size
    }
}
