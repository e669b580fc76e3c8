import Foundation

/// Drops the numbers JSON cannot carry — NaN and ±infinity — from tracked properties, naming the
/// key path of each (<doc:Behaviour#E6>, rev 4, as the Exponea SDK does).
enum NonFiniteNumbers {
    /// `properties` without their non-finite numbers: a member holding one loses its key, an array
    /// its element. Each dropped value's key path is appended to `dropped`, keys in sorted order
    /// (`properties.cart[2].price`). Recursive: call it only on properties whose depth was checked.
    static func dropped(from properties: [String: JSONValue], path: String, into dropped: inout [String]) -> [String: JSONValue] {
        var kept = properties
        for key in properties.keys.sorted() {
            let memberPath = "\(path).\(key)"
            if let value = keptValue(properties[key]!, path: memberPath, into: &dropped) {
                kept[key] = value
            } else {
                kept[key] = nil
            }
        }
        return kept
    }

    /// The value without its non-finite numbers, or `nil` when it is one.
    private static func keptValue(_ value: JSONValue, path: String, into dropped: inout [String]) -> JSONValue? {
        switch value {
        case .double(let number) where !number.isFinite:
            dropped.append(path)
            return nil
        case .array(let items):
            var kept: [JSONValue] = []
            kept.reserveCapacity(items.count)
            for (index, item) in items.enumerated() {
                if let value = keptValue(item, path: "\(path)[\(index)]", into: &dropped) { kept.append(value) }
            }
            return .array(kept)
        case .object(let members):
            return .object(Self.dropped(from: members, path: path, into: &dropped))
        default:
            return value
        }
    }
}
