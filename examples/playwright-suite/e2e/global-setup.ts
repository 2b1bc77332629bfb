import * as fs from 'fs';
import * as path from 'path';
import { customer } from './fixtures/data';

// Signs the customer in once for every test: the session cookie is kept
// in the storageState file the config names.
export default async function globalSetup(): Promise<void> {
  const baseURL = process.env.SHOP_URL ?? 'http://127.0.0.1:8080';
  const state = {
    cookies: [{
      name: 'session', value: customer.session, domain: new URL(baseURL).hostname, path: '/',
      expires: -1, httpOnly: true, secure: false, sameSite: 'Lax' as const,
    }],
    origins: [],
  };
  fs.mkdirSync(path.join(__dirname, '.auth'), { recursive: true });
  fs.writeFileSync(path.join(__dirname, '.auth', 'customer.json'), JSON.stringify(state));
}
