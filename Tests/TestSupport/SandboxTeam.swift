/// The team and key the sandbox trusts in every suite: Apple's ten-character identifiers.
public let sandboxTeamID = "TEAMID1234"
public let sandboxKeyID = "KEYID12345"
