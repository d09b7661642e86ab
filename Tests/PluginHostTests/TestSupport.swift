// Every PluginHostTests file sees TestSupport (ManifestFolder, FabricatedAdapter, TestTime, ...).
@_exported import TestSupport
