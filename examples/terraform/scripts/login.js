const { chromium } = require('playwright');

const browser = await chromium.launch();
const page = await browser.newPage();
await page.goto(process.env.BASE_URL + '/login');
await browser.close();
