// Signs every request of the API check with a short-lived token.
const crypto = require('crypto')
const stamp = Date.now().toString()
request.headers['X-Signature'] = crypto.createHmac('sha256', process.env.SIGNING_KEY).update(stamp).digest('hex')
request.headers['X-Timestamp'] = stamp
