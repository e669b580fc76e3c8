import Foundation
import SegmentsDomain

/// A value that can be an event or customer property: the Exponea SDK's property type, kept so
/// properties held in variables (`let price: Double`, `let props: [String: JSONConvertible]`)
/// are passed as they were (<doc:Behaviour#X1>).
///
/// `String`, `Substring`, `Bool`, every integer and floating-point type, `Decimal`, `NSString`,
/// `NSNull`, ``JSONValue``, optionals of these (`nil` is JSON `null`), arrays of anything and
/// dictionaries with `String` keys conform. In an array or dictionary, an element that does not
/// conform is sent as `null`.
///
/// The facade converts properties to ``JSONValue`` on the calling thread, before the call returns,
/// so the value needs no `Sendable` conformance. A non-finite number (NaN, ±infinity) is dropped
/// with a warning when the event is tracked (<doc:Behaviour#E6>).
public protocol JSONConvertible {
    /// The value as JSON.
    var jsonValue: JSONValue { get }
}

extension JSONValue: JSONConvertible {
    /// The value itself.
    public var jsonValue: JSONValue { self }
}

extension String: JSONConvertible {
    /// A JSON string.
    public var jsonValue: JSONValue { .string(self) }
}

extension Substring: JSONConvertible {
    /// A JSON string.
    public var jsonValue: JSONValue { .string(String(self)) }
}

extension Bool: JSONConvertible {
    /// `true` or `false`.
    public var jsonValue: JSONValue { .bool(self) }
}

extension Int: JSONConvertible {
    /// A whole number.
    public var jsonValue: JSONValue { .int(self) }
}

extension Int8: JSONConvertible {
    /// A whole number.
    public var jsonValue: JSONValue { .int(Int(self)) }
}

extension Int16: JSONConvertible {
    /// A whole number.
    public var jsonValue: JSONValue { .int(Int(self)) }
}

extension Int32: JSONConvertible {
    /// A whole number.
    public var jsonValue: JSONValue { .int(Int(self)) }
}

extension Int64: JSONConvertible {
    /// A whole number; one beyond `Int`'s range (on 32-bit platforms) is sent as a `Double`.
    public var jsonValue: JSONValue { Int(exactly: self).map(JSONValue.int) ?? .double(Double(self)) }
}

extension UInt: JSONConvertible {
    /// A whole number; one beyond `Int.max` is sent as a `Double`.
    public var jsonValue: JSONValue { Int(exactly: self).map(JSONValue.int) ?? .double(Double(self)) }
}

extension UInt8: JSONConvertible {
    /// A whole number.
    public var jsonValue: JSONValue { .int(Int(self)) }
}

extension UInt16: JSONConvertible {
    /// A whole number.
    public var jsonValue: JSONValue { .int(Int(self)) }
}

extension UInt32: JSONConvertible {
    /// A whole number; one beyond `Int`'s range (on 32-bit platforms) is sent as a `Double`.
    public var jsonValue: JSONValue { Int(exactly: self).map(JSONValue.int) ?? .double(Double(self)) }
}

extension UInt64: JSONConvertible {
    /// A whole number; one beyond `Int.max` is sent as a `Double`.
    public var jsonValue: JSONValue { Int(exactly: self).map(JSONValue.int) ?? .double(Double(self)) }
}

extension Double: JSONConvertible {
    /// A number.
    public var jsonValue: JSONValue { .double(self) }
}

extension Float: JSONConvertible {
    /// A number.
    public var jsonValue: JSONValue { .double(Double(self)) }
}

extension Decimal: JSONConvertible {
    /// A number, through `Double`.
    public var jsonValue: JSONValue { .double(NSDecimalNumber(decimal: self).doubleValue) }
}

extension Optional: JSONConvertible where Wrapped: JSONConvertible {
    /// The wrapped value, or `null`.
    public var jsonValue: JSONValue { self?.jsonValue ?? .null }
}

extension Array: JSONConvertible {
    /// A JSON array; an element that is not ``JSONConvertible`` is `null`.
    public var jsonValue: JSONValue { .array(map(JSONValue.converting)) }
}

extension Dictionary: JSONConvertible where Key == String {
    /// A JSON object; a value that is not ``JSONConvertible`` is `null`.
    public var jsonValue: JSONValue { .object(mapValues(JSONValue.converting)) }
}

extension NSNull: JSONConvertible {
    /// `null`.
    public var jsonValue: JSONValue { .null }
}

extension NSString: JSONConvertible {
    /// A JSON string.
    public var jsonValue: JSONValue { .string(self as String) }
}

extension JSONValue {
    /// `value` as JSON when it is ``JSONConvertible`` (an optional inside `Any` included), else
    /// `null`.
    static func converting(_ value: Any) -> JSONValue {
        (value as? any JSONConvertible)?.jsonValue ?? .null
    }
}

extension Dictionary where Key == String, Value == any JSONConvertible {
    /// The properties as the SDK's ``JSONValue`` dictionary.
    var jsonValues: [String: JSONValue] { mapValues(\.jsonValue) }
}
