import Foundation
import SegmentsDomain
import SegmentsData

extension SegmentsClient {
    /// Properties added to every event tracked from now on and, when the configuration allows it
    /// (``Configuration/allowDefaultCustomerProperties``), to every customer update; the item's own
    /// keys win (<doc:Behaviour#E8>, Exponea's `defaultProperties`). Empty when there are none.
    ///
    /// Settable at any time, before ``configure(_:)`` too; a change takes its place in the client's
    /// one order with the lifecycle and tracking calls (<doc:Behaviour#A4>): items tracked after it
    /// get the new values, items tracked before keep theirs. A configuration that names
    /// ``Configuration/defaultProperties`` replaces them; one that names none keeps them. A
    /// non-finite number is dropped with one warning naming its key path
    /// (`defaultProperties.price`); values nested deeper than 64 levels or larger than 64 KiB
    /// encoded are refused with an error log line, and the properties stay as they were
    /// (<doc:Behaviour#E6>).
    public var defaultProperties: [String: JSONValue] {
        get { engine.defaultProperties.properties }
        set {
            do {
                engine.setDefaultProperties(try accepted(newValue, by: "defaultProperties", root: "defaultProperties"))
            } catch {
                options.runtime.logger.log(.error, "Tracking: Default properties refused: \(SegmentsError.wrapping(error))")
            }
        }
    }

    /// What `configuration` says of default properties, its values checked as tracked properties
    /// are (<doc:Behaviour#E6>, <doc:Behaviour#E8>).
    /// - Throws: ``SegmentsError`` `.invalidConfiguration` for values too deep or too large.
    func configuredDefaults(_ configuration: Configuration) throws -> ConfiguredDefaults {
        let properties = try configuration.defaultProperties.map {
            try accepted($0, by: "configure", root: "defaultProperties")
        }
        return ConfiguredDefaults(properties: properties, forCustomerUpdates: configuration.allowDefaultCustomerProperties)
    }
}
