// Starts `monform lsp` for the workspace's monform files. The server finds
// each file's project itself (the folder holding monform.toml above it),
// so one client serves every project of the workspace.
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const settings = vscode.workspace.getConfiguration("monform");
  const command = settings.get<string>("path") || "monform";
  const environment = settings.get<string>("environment") || "";
  const args = environment ? ["--env", environment, "lsp"] : ["lsp"];
  // The editor's environment reaches the server: MONFORM_API_KEY and the
  // like give hover its live facts; nothing is stored in settings.
  const serverOptions: ServerOptions = { command, args };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "yaml" },
      { scheme: "file", language: "toml" },
    ],
    synchronize: {
      fileEvents: vscode.workspace.createFileSystemWatcher("**/{monform.toml,*.yaml,*.yml,*.toml}"),
    },
  };
  client = new LanguageClient("monform", "monform", serverOptions, clientOptions);
  context.subscriptions.push(client);
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
