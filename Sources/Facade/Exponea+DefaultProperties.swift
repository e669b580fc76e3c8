import Foundation
import SegmentsDomain

extension Exponea {
    /// Default properties tracked with every event and, when the configuration allows default
    /// customer properties, with every customer update; the item's own keys win
    /// (<doc:Behaviour#E8>). As in the Exponea SDK, they can be given at configure and changed here
    /// at run time; unlike it, setting them before configure is kept (the Exponea SDK ignores it
    /// with a warning), and applies from the next item tracked on. `nil` or `[:]` removes them.
    /// See ``SegmentsClient/defaultProperties``.
    public var defaultProperties: [String: JSONConvertible]? {
        get {
            let properties = client.defaultProperties
            return properties.isEmpty ? nil : properties.mapValues { $0 as any JSONConvertible }
        }
        set { client.defaultProperties = newValue?.mapValues(\.jsonValue) ?? [:] }
    }
}
