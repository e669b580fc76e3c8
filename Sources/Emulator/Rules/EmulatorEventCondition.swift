/// The condition shared by segment and audience rules: at least `minimumCount` events of
/// `eventType`, one of which carries `property` when it is given.
enum EmulatorEventCondition {
    static func holds<Events: Sequence>(
        for events: Events, eventType: String, minimumCount: Int, property: EmulatorSegmentRule.PropertyMatch?
    ) -> Bool where Events.Element == EmulatorEvent {
        var count = 0
        var propertySeen = property == nil
        for event in events where event.eventType == eventType {
            count += 1
            if let property, event.properties[property.name] == property.equals { propertySeen = true }
        }
        return count >= minimumCount && propertySeen
    }
}
