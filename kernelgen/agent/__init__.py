"""The agent session (`kernelgen agent`) and its MCP face (`kernelgen mcp`)."""
